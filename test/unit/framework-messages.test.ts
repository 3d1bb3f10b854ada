/** The agent's own message list kept with a conversation: what is taken from a run, and how it is bounded. */
import { describe, expect, it } from 'vitest';
import { boundFramework, frameworkMessagesFrom, textAsFramework, turnOf } from '../../functions/agents/framework-messages.ts';
import type { FrameworkMessage } from '../../functions/runtimes/compute.ts';

/** One tool-use turn as Strands writes it: the prompt, the tool call, its result, the answer. */
function turn(prompt: string, result = 'ok'): FrameworkMessage[] {
  return [
    { role: 'user', content: [{ text: prompt }] },
    { role: 'assistant', content: [{ toolUse: { toolUseId: `t-${prompt}`, name: 'lookup', input: { q: prompt } } }] },
    { role: 'user', content: [{ toolResult: { toolUseId: `t-${prompt}`, status: 'success', content: [{ text: result }] } }] },
    { role: 'assistant', content: [{ text: `answer to ${prompt}` }] },
  ];
}

describe('frameworkMessagesFrom', () => {
  it('takes the blocks as the framework wrote them, and nothing else a message carries', () => {
    // Act
    const taken = frameworkMessagesFrom([{ role: 'assistant', content: [{ toolUse: { name: 'x' } }], extra: 1 }]);
    // Assess
    expect(taken).toEqual([{ role: 'assistant', content: [{ toolUse: { name: 'x' } }] }]);
  });

  it('refuses anything that is not a list of messages', () => {
    // Act / Assess
    for (const raw of [[{ role: 'system', content: [] }], [{ role: 'user', content: 'text' }], ['x'], [{ role: 'user', content: ['x'] }]]) {
      expect(frameworkMessagesFrom(raw), JSON.stringify(raw)).toBeNull();
    }
  });
});

describe('turnOf', () => {
  it('is what the run added to the list it was given', () => {
    // Prepare
    const sent = [...turn('one'), ...turn('two')];
    // Act
    const added = turnOf([...sent, ...turn('three')], sent, 'three');
    // Assess
    expect(added).toEqual(turn('three'));
  });

  it('starts at the prompt when the agent rewrote its history, not at a tool result', () => {
    // Prepare: a sliding window dropped the first turn; the prompt also appears in a tool result.
    const sent = [...turn('one'), ...turn('two')];
    const after = [...turn('two'), ...turn('three', 'three')];
    // Act
    const added = turnOf(after, sent, 'three');
    // Assess
    expect(added).toEqual(turn('three', 'three'));
  });

  it('is null when the prompt is nowhere in a list the agent rewrote', () => {
    // Act / Assess
    expect(turnOf(turn('other'), turn('one'), 'three')).toBeNull();
  });
});

describe('boundFramework', () => {
  it('keeps a list within the bound as it is', () => {
    // Prepare
    const list = [...turn('one'), ...turn('two')];
    // Act / Assess
    expect(boundFramework(list, JSON.stringify(list).length)).toEqual(list);
  });

  it('drops whole turns from the front, so a tool result never loses its tool use', () => {
    // Prepare: the second turn's tool result is large; the bound fits the last two turns only.
    const list = [...turn('one'), ...turn('two', 'y'.repeat(500)), ...turn('three')];
    const lastTwo = [...turn('two', 'y'.repeat(500)), ...turn('three')];
    // Act
    const bounded = boundFramework(list, JSON.stringify(lastTwo).length + 10);
    // Assess
    expect(bounded).toEqual(lastTwo);
  });

  it('is null when the last turn alone is over the bound', () => {
    // Prepare
    const list = [...turn('one'), ...turn('two', 'z'.repeat(1000))];
    // Act / Assess
    expect(boundFramework(list, 900)).toBeNull();
  });
});

describe('textAsFramework', () => {
  it('is the text view in the framework’s blocks', () => {
    // Act
    const list = textAsFramework([
      { role: 'user', content: 'hi', timestamp: 1 },
      { role: 'assistant', content: 'hello', timestamp: 2 },
    ]);
    // Assess
    expect(list).toEqual([
      { role: 'user', content: [{ text: 'hi' }] },
      { role: 'assistant', content: [{ text: 'hello' }] },
    ]);
  });
});
