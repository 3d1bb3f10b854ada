/**
 * Audio of the voice bridge: PCM16LE mono everywhere inside, μ-law 8 kHz on the phone leg.
 *
 * Resampling is a windowed-sinc filter (Blackman window, 16 taps each side, cutoff at the lower
 * Nyquist frequency, 0.95 of it for headroom), run on a stream: each resampler keeps the tail of
 * what it was given, so chunk boundaries are inaudible. Dropping or repeating samples would alias
 * (8 kHz phone audio from 24 kHz speech needs a low-pass first). The filter delays the stream by
 * 16 input samples (1 ms at 16 kHz, 2 ms at 8 kHz); those come out with the next chunk. Kernels are
 * computed once per fractional phase, which the platform's rates (8, 16, 24 kHz and the like)
 * keep to a handful.
 */
import * as alawmulaw from 'alawmulaw';

/** Node loads the package's CommonJS build (the codecs under `default`), esbuild its ES module (named exports). */
const { mulaw } = 'mulaw' in alawmulaw ? alawmulaw : (alawmulaw as unknown as { default: typeof alawmulaw }).default;

const HALF_TAPS = 16;
const MAX_CACHED_PHASES = 4096;

/** A streaming sample-rate converter for one direction of one call. */
export class Resampler {
  private history: Float32Array;
  /** Position of the next output sample, in input samples from the start of `history`. */
  private position = HALF_TAPS;
  private readonly step: number;
  private readonly cutoff: number;
  private readonly kernels = new Map<number, Float32Array>();

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    this.step = fromRate / toRate;
    this.cutoff = Math.min(1, toRate / fromRate) * (fromRate === toRate ? 1 : 0.95);
    this.history = new Float32Array(2 * HALF_TAPS);
  }

  /** The resampled audio of `input` (PCM16 samples) and of what was held back before it. */
  push(input: Int16Array): Int16Array {
    if (this.fromRate === this.toRate) return input;
    const buffer = new Float32Array(this.history.length + input.length);
    buffer.set(this.history);
    for (let i = 0; i < input.length; i++) buffer[this.history.length + i] = input[i]!;
    const out: number[] = [];
    while (this.position + HALF_TAPS < buffer.length) {
      const base = Math.floor(this.position);
      const kernel = this.kernel(this.position - base);
      let sum = 0;
      const first = base - HALF_TAPS + 1;
      for (let k = 0; k < kernel.length; k++) sum += buffer[first + k]! * kernel[k]!;
      out.push(sum < -32768 ? -32768 : sum > 32767 ? 32767 : Math.round(sum));
      this.position += this.step;
    }
    const keep = 2 * HALF_TAPS;
    const drop = buffer.length - keep;
    this.history = buffer.slice(drop);
    this.position -= drop;
    return Int16Array.from(out);
  }

  /** Weights of the 2 × HALF_TAPS input samples around an output sample `fraction` past one. */
  private kernel(fraction: number): Float32Array {
    const key = Math.round(fraction * 1e6);
    const cached = this.kernels.get(key);
    if (cached !== undefined) return cached;
    const weights = new Float32Array(2 * HALF_TAPS);
    let total = 0;
    for (let k = 0; k < weights.length; k++) {
      // Distance from the output sample to input sample (base - HALF_TAPS + 1 + k).
      const x = fraction + HALF_TAPS - 1 - k;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * this.cutoff * x) / (Math.PI * this.cutoff * x);
      const w = blackman((x + HALF_TAPS) / (2 * HALF_TAPS));
      weights[k] = this.cutoff * sinc * w;
      total += weights[k]!;
    }
    // Unity gain at DC, whatever the phase.
    for (let k = 0; k < weights.length; k++) weights[k] = weights[k]! / total;
    if (this.kernels.size < MAX_CACHED_PHASES) this.kernels.set(key, weights);
    return weights;
  }
}

function blackman(t: number): number {
  if (t <= 0 || t >= 1) return 0;
  return 0.42 - 0.5 * Math.cos(2 * Math.PI * t) + 0.08 * Math.cos(4 * Math.PI * t);
}

/** PCM16LE bytes as samples (a copy when the buffer is not aligned). */
export function pcmSamples(bytes: Buffer): Int16Array {
  const whole = bytes.length - (bytes.length % 2);
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, whole / 2);
  const copy = Buffer.from(bytes.subarray(0, whole));
  return new Int16Array(copy.buffer, copy.byteOffset, whole / 2);
}

/** Samples as PCM16LE bytes (no copy). */
export function pcmBytes(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}

/** G.711 μ-law bytes (Twilio's `audio/x-mulaw`) to PCM16 samples. */
export function mulawToPcm(bytes: Buffer): Int16Array {
  return mulaw.decode(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
}

/** PCM16 samples to G.711 μ-law bytes. */
export function pcmToMulaw(samples: Int16Array): Buffer {
  const encoded = mulaw.encode(samples);
  return Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
}
