import { useEffect, useRef, useState } from 'preact/hooks';
import { capture, Player } from '../../../widget/audio.ts';
import { Downsampler, INPUT_RATE, OUTPUT_RATE } from '../../../widget/downsample.ts';
import { useApi } from '../../api.ts';
import { Button, Form, TextInput } from '../../ui/form.tsx';
import { Section } from '../../ui/page.tsx';
import { Badge } from '../../ui/status.tsx';
import type { Agent } from './shared.tsx';

type Phase = 'idle' | 'connecting' | 'live' | 'ending';

/** A line of the call: what either side said (consecutive repeats counted), or a tool the agent used. */
type Line = { kind: 'said'; role: 'user' | 'assistant'; text: string; final: boolean; times: number } | { kind: 'tool'; name: string };

/** Why the voice bridge closed a call (SPEC 4.2 and the guide), as the user should read it. */
const CLOSE_REASONS: Record<number, string> = {
  4400: 'This agent is not a voice agent.',
  4401: 'The voice host did not accept your sign-in.',
  4402: 'Not enough credits for a call.',
  4403: 'This agent is private to someone else.',
  4404: 'No such agent.',
  4408: 'The call ended after a quiet spell.',
  4429: 'Too many calls of yours at once.',
};

/** What a call holds while it is open. */
interface Call {
  readonly socket: WebSocket;
  readonly audio: AudioContext;
  readonly mic: MediaStream;
  readonly player: Player;
  stopCapture: (() => void) | null;
}

/** Bytes of 20 ms of silence at the bridge's input rate (16-bit mono). */
const SILENCE = new ArrayBuffer((INPUT_RATE / 50) * 2);

/**
 * A push-to-talk test call with a voice agent (SPEC 4.2) from the browser: the microphone is
 * captured and downsampled to 16 kHz PCM16 by the embed widget's modules and sent over the voice
 * WebSocket, as silence except while the talk button (or Space) is held, so the model hears when a
 * turn ends; the agent's 24 kHz audio is played as it comes and its transcripts listed. The token
 * goes in the first message, never in the URL.
 */
export function VoiceCall(props: { agent: Agent }) {
  const api = useApi();
  const { agent } = props;
  const [phase, setPhase] = useState<Phase>('idle');
  const [talking, setTalking] = useState(false);
  const [lines, setLines] = useState<Line[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const [heardMs, setHeardMs] = useState(0);
  const [spokenMs, setSpokenMs] = useState(0);
  const [ended, setEnded] = useState<{ seconds: number; credits: number } | null>(null);
  const [typed, setTyped] = useState('');
  const call = useRef<Call | null>(null);
  const talkingNow = useRef(false);

  const release = () => {
    const current = call.current;
    call.current = null;
    talkingNow.current = false;
    setTalking(false);
    if (current === null) return;
    current.stopCapture?.();
    current.player.stop();
    for (const track of current.mic.getTracks()) track.stop();
    void current.audio.close().catch(() => undefined);
    if (current.socket.readyState <= WebSocket.OPEN) current.socket.close();
  };
  useEffect(() => release, []);

  const said = (role: 'user' | 'assistant', text: string, final: boolean) =>
    setLines((current) => {
      const list = [...current];
      const last = list.at(-1);
      // A partial transcript is replaced by the next piece of the same turn.
      if (last?.kind === 'said' && last.role === role && !last.final) list[list.length - 1] = { ...last, text, final, times: 1 };
      else if (last?.kind === 'said' && last.role === role && last.final && final && last.text === text)
        list[list.length - 1] = { ...last, times: last.times + 1 };
      else list.push({ kind: 'said', role, text, final, times: 1 });
      return list.slice(-200);
    });

  const start = async () => {
    if (call.current !== null) return;
    setProblem(null);
    setEnded(null);
    setLines([]);
    setHeardMs(0);
    setSpokenMs(0);
    setPhase('connecting');
    let mic: MediaStream;
    try {
      mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
    } catch {
      setProblem('The test call needs your microphone: allow it for this page and start again.');
      setPhase('idle');
      return;
    }
    const audio = new AudioContext();
    await audio.resume().catch(() => undefined);
    const socket = new WebSocket(`${api.hosts.voiceUrl}/ws/${encodeURIComponent(agent.agentId)}`);
    socket.binaryType = 'arraybuffer';
    const current: Call = { socket, audio, mic, player: new Player(audio), stopCapture: null };
    call.current = current;
    let started = false;
    socket.onopen = () => socket.send(JSON.stringify({ type: 'auth', token: api.token }));
    socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data !== 'string') {
        current.player.play(event.data);
        const ms = (event.data.byteLength / 2 / OUTPUT_RATE) * 1000;
        setHeardMs((total) => total + ms);
        return;
      }
      const frame = JSON.parse(event.data) as {
        type: string;
        text?: string;
        role?: string;
        is_final?: boolean;
        name?: string;
        message?: string;
        seconds?: number;
        credits?: number;
      };
      if (frame.type === 'ready') {
        started = true;
        setPhase('live');
      } else if (frame.type === 'transcript') said(frame.role === 'user' ? 'user' : 'assistant', frame.text ?? '', frame.is_final ?? true);
      else if (frame.type === 'interrupted') current.player.stop();
      else if (frame.type === 'tool') setLines((list) => [...list, { kind: 'tool' as const, name: frame.name ?? 'a tool' }].slice(-200));
      else if (frame.type === 'error') setProblem(frame.message ?? 'The agent reported an error.');
      else if (frame.type === 'session_end') setEnded({ seconds: frame.seconds ?? 0, credits: frame.credits ?? 0 });
    };
    socket.onclose = (event) => {
      if (call.current === current) release();
      if (event.code >= 4000 && (event.code !== 4408 || started)) setProblem(CLOSE_REASONS[event.code] ?? (event.reason || 'The call could not go on.'));
      else if (!started) setProblem('The call could not start.');
      setPhase('idle');
    };
    // The microphone runs for the whole call; while the button is not held it is sent as silence.
    const downsampler = new Downsampler(audio.sampleRate, (frame) => {
      if (socket.readyState !== WebSocket.OPEN || !started) return;
      if (talkingNow.current) {
        socket.send(frame);
        setSpokenMs((total) => total + 20);
      } else socket.send(SILENCE);
    });
    try {
      current.stopCapture = await capture(audio, mic, (block) => downsampler.push(block));
    } catch {
      // The console's Content-Security-Policy may refuse the capture worklet (a blob: script):
      // the older ScriptProcessor does the same without one.
      current.stopCapture = captureWithoutWorklet(audio, mic, (block) => downsampler.push(block));
    }
    if (call.current !== current) current.stopCapture();
  };

  const end = () => {
    const current = call.current;
    if (current === null) return;
    talkingNow.current = false;
    setTalking(false);
    if (current.socket.readyState === WebSocket.OPEN) {
      current.stopCapture?.();
      current.stopCapture = null;
      // The bridge ends the session (billing, `session_end`) and then closes.
      current.socket.send(JSON.stringify({ type: 'end' }));
      setPhase('ending');
    } else {
      release();
      setPhase('idle');
    }
  };

  const talk = (on: boolean) => {
    if (phase !== 'live' && on) return;
    talkingNow.current = on;
    setTalking(on);
  };

  // Space talks anywhere on the page while the call is live (not while typing or on another control).
  useEffect(() => {
    if (phase !== 'live') return;
    const isControl = (target: EventTarget | null) =>
      target instanceof Element && target.closest('input, textarea, select, button, a, [contenteditable]') !== null;
    const down = (event: KeyboardEvent) => {
      if (event.code !== 'Space' || isControl(event.target)) return;
      event.preventDefault();
      if (!event.repeat) talk(true);
    };
    const up = (event: KeyboardEvent) => {
      if (event.code !== 'Space' || isControl(event.target)) return;
      event.preventDefault();
      talk(false);
    };
    document.addEventListener('keydown', down);
    document.addEventListener('keyup', up);
    return () => {
      document.removeEventListener('keydown', down);
      document.removeEventListener('keyup', up);
    };
  }, [phase]);

  const sendText = () => {
    const text = typed.trim();
    const socket = call.current?.socket;
    if (text === '' || socket === undefined || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ type: 'text', text }));
    setTyped('');
  };

  const live = phase === 'live';
  return (
    <Section title="Test call">
      <p class="muted">
        Talk to {agent.agentName} from this browser: start the call, then hold the button (or Space) while you speak and let go when you are done. Calls use
        voice minutes and credits like any other.
      </p>
      <div class="agent-call-controls">
        {phase === 'idle' ? (
          <Button variant="primary" onClick={() => void start()}>
            Start test call
          </Button>
        ) : (
          <Button variant="danger" onClick={end} disabled={phase === 'ending'}>
            End call
          </Button>
        )}
        <button
          type="button"
          class={`button agent-talk${talking ? ' agent-talk-on' : ''}`}
          aria-pressed={talking}
          disabled={!live}
          onPointerDown={(e) => {
            if (e.button !== 0) return;
            (e.currentTarget as HTMLButtonElement).setPointerCapture(e.pointerId);
            talk(true);
          }}
          onPointerUp={() => talk(false)}
          onPointerCancel={() => talk(false)}
          onKeyDown={(e) => {
            if (e.key !== ' ' && e.key !== 'Enter') return;
            e.preventDefault();
            if (!e.repeat) talk(true);
          }}
          onKeyUp={(e) => {
            if (e.key !== ' ' && e.key !== 'Enter') return;
            e.preventDefault();
            talk(false);
          }}
          onBlur={() => talk(false)}
        >
          {talking ? 'Talking… release to stop' : 'Hold to talk'}
        </button>
        <span role="status" class="agent-call-status">
          <Badge tone={live ? 'ok' : phase === 'idle' ? 'neutral' : 'warn'}>
            {phase === 'idle' ? 'not connected' : phase === 'connecting' ? 'connecting' : phase === 'ending' ? 'ending' : talking ? 'talking' : 'listening'}
          </Badge>
        </span>
      </div>
      <p class="agent-call-figures" aria-label="Call audio">
        Speech sent: <span data-testid="speech-sent">{(spokenMs / 1000).toFixed(1)}</span> s · Agent audio received:{' '}
        <span data-testid="audio-received">{(heardMs / 1000).toFixed(1)}</span> s
        {ended === null ? null : (
          <>
            {' '}
            · Call ended: {ended.seconds} s, {ended.credits} credits
          </>
        )}
      </p>
      {problem === null ? null : (
        <div class="note note-error" role="alert">
          <strong>Call problem</strong>
          <p>{problem}</p>
        </div>
      )}
      <Form label="Type to the agent" class="form form-inline" onSubmit={sendText}>
        <TextInput label="Say in text" hint="Sent as typed text, for a quick check without speaking" value={typed} onValue={setTyped} disabled={!live} />
        <Button type="submit" disabled={!live || typed.trim() === ''}>
          Send text
        </Button>
      </Form>
      <h3>Transcript</h3>
      <ol class="agent-chat-log agent-transcript" aria-label="Transcript" aria-live="polite" tabIndex={0}>
        {lines.length === 0 ? <li class="muted">Nothing said yet.</li> : null}
        {lines.map((line, i) =>
          line.kind === 'tool' ? (
            <li class="agent-msg agent-msg-tool" key={i}>
              <span class="agent-msg-who">Tool</span> <code>{line.name}</code>
            </li>
          ) : (
            <li class={`agent-msg agent-msg-${line.role}${line.final ? '' : ' agent-msg-partial'}`} key={i}>
              <span class="agent-msg-who">{line.role === 'user' ? 'You' : 'Agent'}</span>
              <p class="agent-msg-text">
                {line.text}
                {line.final ? '' : ' …'}
                {line.times > 1 ? <span class="muted"> (×{line.times})</span> : null}
              </p>
            </li>
          ),
        )}
      </ol>
    </Section>
  );
}

/** Microphone blocks through a ScriptProcessor (no worklet module to load); returns its stop. */
function captureWithoutWorklet(context: AudioContext, stream: MediaStream, onBlock: (block: Float32Array) => void): () => void {
  const source = context.createMediaStreamSource(stream);
  const mute = context.createGain();
  mute.gain.value = 0;
  mute.connect(context.destination);
  const processor = context.createScriptProcessor(2048, 1, 1);
  processor.onaudioprocess = (event) => onBlock(event.inputBuffer.getChannelData(0).slice(0));
  source.connect(processor).connect(mute);
  return () => {
    source.disconnect();
    processor.disconnect();
    processor.onaudioprocess = null;
  };
}
