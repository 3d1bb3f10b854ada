// No DOM types here: the platform's unit tests (compiled without the DOM library) import it.
/** The voice bridge's formats (SPEC 4.2): 16 kHz PCM16 from the caller, 24 kHz PCM16 to them. */
export const INPUT_RATE = 16_000;
export const OUTPUT_RATE = 24_000;
/** 20 ms of caller audio per WebSocket message. */
const FRAME_SAMPLES = INPUT_RATE / 50;

/**
 * Converts the microphone's rate (often 48 kHz) to 16 kHz PCM16LE. Each output sample is the mean
 * of the input samples its interval covers, a box low-pass that keeps what is above 8 kHz from
 * folding back into the speech band (plain decimation would alias it), with the fractional
 * position carried from one block to the next so the rate stays exact across blocks.
 */
export class Downsampler {
  private readonly ratio: number;
  private position = 0;
  private sum = 0;
  private count = 0;
  private out = new Int16Array(FRAME_SAMPLES);
  private filled = 0;

  constructor(
    inputRate: number,
    private readonly emit: (frame: ArrayBuffer) => void,
  ) {
    this.ratio = inputRate / INPUT_RATE;
  }

  push(block: Float32Array): void {
    for (let i = 0; i < block.length; i++) {
      this.sum += block[i]!;
      this.count++;
      this.position += 1;
      if (this.position >= this.ratio) {
        this.position -= this.ratio;
        const mean = Math.max(-1, Math.min(1, this.sum / this.count));
        this.out[this.filled++] = mean < 0 ? mean * 0x8000 : mean * 0x7fff;
        this.sum = 0;
        this.count = 0;
        if (this.filled === FRAME_SAMPLES) {
          this.emit(this.out.buffer.slice(0));
          this.filled = 0;
        }
      }
    }
  }
}
