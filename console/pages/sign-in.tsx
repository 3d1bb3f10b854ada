import { useState } from 'preact/hooks';
import type { ConsoleConfig } from '../config.ts';
import { answerChallenge, signInWithPassword, storeToken, type CognitoStep } from '../session.ts';
import { Button, Checkbox, Form, TextInput } from '../ui/form.tsx';
import { ErrorNote } from '../ui/status.tsx';

/**
 * Sign-in: a token (the local platform), or e-mail and password against the deployment's user
 * pool (the cloud), whose ID token the console then sends as the bearer token.
 */
export function SignIn(props: { config: ConsoleConfig; onToken: (token: string) => Promise<void> }) {
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const use = async (token: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await props.onToken(token);
      storeToken(token, remember);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <h1>Sign in to the Agent Platform console</h1>
      {props.config.signIn.kind === 'token' ? (
        <TokenForm hint={props.config.signIn.hint} busy={busy} onToken={use} />
      ) : (
        <PasswordForm config={props.config.signIn} busy={busy} onToken={use} onError={setError} />
      )}
      <Checkbox label="Stay signed in on this device" checked={remember} onChecked={setRemember} />
      <ErrorNote error={error} title="Not signed in" />
      <p class="muted">The console calls the same API as curl and the CLI, with your token, and can do nothing the API would not let you do.</p>
    </main>
  );
}

function TokenForm(props: { hint: string | undefined; busy: boolean; onToken: (token: string) => Promise<void> }) {
  const [token, setToken] = useState('');
  return (
    <Form label="Sign in with a token" onSubmit={() => props.onToken(token.trim())}>
      <TextInput
        label="API token"
        type="password"
        autoComplete="off"
        spellcheck={false}
        required
        placeholder="svc_ut_..."
        hint={props.hint ?? 'A user token (svc_ut_...).'}
        value={token}
        onValue={setToken}
      />
      <Button type="submit" variant="primary" busy={props.busy}>
        Sign in
      </Button>
    </Form>
  );
}

function PasswordForm(props: {
  config: Extract<ConsoleConfig['signIn'], { kind: 'cognito' }>;
  busy: boolean;
  onToken: (token: string) => Promise<void>;
  onError: (error: unknown) => void;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [answer, setAnswer] = useState('');
  const [step, setStep] = useState<Exclude<CognitoStep, { kind: 'done' }> | null>(null);
  const advance = async (next: Promise<CognitoStep>) => {
    props.onError(undefined);
    try {
      const result = await next;
      if (result.kind === 'done') return props.onToken(result.idToken);
      setAnswer('');
      setStep(result);
    } catch (error) {
      props.onError(error);
    }
  };
  if (step !== null)
    return (
      <Form label="Finish signing in" onSubmit={() => advance(answerChallenge(props.config, step, email, answer))}>
        <TextInput
          label={step.kind === 'new-password' ? 'Choose a new password' : 'Code from your authenticator app'}
          type={step.kind === 'new-password' ? 'password' : 'text'}
          autoComplete={step.kind === 'new-password' ? 'new-password' : 'one-time-code'}
          inputMode={step.kind === 'mfa' ? 'numeric' : undefined}
          required
          value={answer}
          onValue={setAnswer}
        />
        <Button type="submit" variant="primary" busy={props.busy}>
          Continue
        </Button>
      </Form>
    );
  return (
    <Form label="Sign in with e-mail and password" onSubmit={() => advance(signInWithPassword(props.config, email.trim(), password))}>
      <TextInput label="E-mail" type="email" autoComplete="username" required value={email} onValue={setEmail} />
      <TextInput label="Password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
      <Button type="submit" variant="primary" busy={props.busy}>
        Sign in
      </Button>
    </Form>
  );
}
