import { OUTPUT_RATE } from './downsample.ts';

/** Plays 24 kHz PCM16LE chunks back to back; `stop` silences what is queued at once (barge-in). */
export class Player {
  private next = 0;
  private readonly playing = new Set<AudioBufferSourceNode>();

  constructor(private readonly context: AudioContext) {}

  play(bytes: ArrayBuffer): void {
    const samples = new Int16Array(bytes, 0, Math.floor(bytes.byteLength / 2));
    if (samples.length === 0) return;
    const buffer = this.context.createBuffer(1, samples.length, OUTPUT_RATE);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < samples.length; i++) channel[i] = samples[i]! / 0x8000;
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const at = Math.max(this.next, this.context.currentTime + 0.02);
    source.start(at);
    this.next = at + buffer.duration;
    this.playing.add(source);
    source.onended = () => this.playing.delete(source);
  }

  stop(): void {
    for (const source of this.playing) {
      try {
        source.stop();
      } catch {
        // Already stopped.
      }
    }
    this.playing.clear();
    this.next = 0;
  }

  get queued(): number {
    return this.playing.size;
  }
}

/** The capture worklet: hands each 128-sample block of the microphone to the page. */
const WORKLET_SOURCE = `registerProcessor('svc-capture', class extends AudioWorkletProcessor {
  process(inputs) { const c = inputs[0] && inputs[0][0]; if (c) this.port.postMessage(c.slice(0)); return true; }
});`;

/**
 * Starts capturing `stream` into `onBlock` (Float32 at the context's rate): an AudioWorklet where
 * there is one, a ScriptProcessor otherwise. Returns the function that stops it.
 */
export async function capture(context: AudioContext, stream: MediaStream, onBlock: (block: Float32Array) => void): Promise<() => void> {
  const source = context.createMediaStreamSource(stream);
  // Nothing is heard of the caller's own voice: the graph ends in a muted gain.
  const mute = context.createGain();
  mute.gain.value = 0;
  mute.connect(context.destination);
  if (context.audioWorklet) {
    const url = URL.createObjectURL(new Blob([WORKLET_SOURCE], { type: 'application/javascript' }));
    try {
      await context.audioWorklet.addModule(url);
    } finally {
      URL.revokeObjectURL(url);
    }
    const node = new AudioWorkletNode(context, 'svc-capture');
    node.port.onmessage = (event: MessageEvent<Float32Array>) => onBlock(event.data);
    source.connect(node).connect(mute);
    return () => {
      source.disconnect();
      node.disconnect();
      node.port.onmessage = null;
    };
  }
  const processor = context.createScriptProcessor(2048, 1, 1);
  processor.onaudioprocess = (event) => onBlock(event.inputBuffer.getChannelData(0).slice(0));
  source.connect(processor).connect(mute);
  return () => {
    source.disconnect();
    processor.disconnect();
    processor.onaudioprocess = null;
  };
}
