import { describe, expect, it } from 'vitest';
import { mulawToPcm, pcmToMulaw, Resampler } from '../../functions/voice/audio.ts';

const tone = (count: number, hz: number, rate: number, level = 10_000) =>
  Int16Array.from({ length: count }, (_, i) => Math.round(level * Math.sin((2 * Math.PI * hz * i) / rate)));
const peak = (samples: Int16Array, skip = 64) => Math.max(...Array.from(samples.slice(skip, samples.length - skip), Math.abs));

describe('voice audio', () => {
  it('resamples 16 kHz to 24 kHz as a stream: 1.5 samples per sample over many chunks, a level kept', () => {
    // Prepare
    const resampler = new Resampler(16_000, 24_000);

    // Act: one second in 100 ms chunks
    const out = Array.from({ length: 10 }, () => resampler.push(Int16Array.from({ length: 1600 }, () => 1000)));
    const samples = Int16Array.from(out.flatMap((chunk) => Array.from(chunk)));

    // Assess: all but the filter's delay (16 input samples) came out, at the level that went in
    expect(samples.length).toBeGreaterThanOrEqual(24_000 - 24);
    expect(samples.length).toBeLessThanOrEqual(24_000);
    expect(Math.min(...samples.slice(100))).toBe(1000);
    expect(Math.max(...samples.slice(100))).toBe(1000);
  });

  it('filters what 8 kHz cannot carry instead of folding it back (no aliasing), and passes speech frequencies', () => {
    // Act
    const high = new Resampler(24_000, 8000).push(tone(4800, 6000, 24_000));
    const speech = new Resampler(24_000, 8000).push(tone(4800, 440, 24_000));

    // Assess: a 6 kHz tone would alias to 2 kHz at full level by dropping samples
    expect(peak(high)).toBeLessThan(100);
    expect(peak(speech)).toBeGreaterThan(9_500);
  });

  it('encodes and decodes G.711 μ-law within its quantisation step', () => {
    // Act
    const back = mulawToPcm(pcmToMulaw(Int16Array.from([0, 1000, -1000, 30_000])));

    // Assess
    expect(back[0]).toBe(0);
    expect(Math.abs(back[1]! - 1000)).toBeLessThan(32);
    expect(Math.abs(back[2]! + 1000)).toBeLessThan(32);
    expect(Math.abs(back[3]! - 30_000)).toBeLessThan(1024);
  });
});
