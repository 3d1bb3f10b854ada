import { useState } from 'preact/hooks';
import { dataOf, useLoad, useSubmit } from '../api.ts';
import { Button, Form, SecretOnce, TextInput } from '../ui/form.tsx';
import { Section } from '../ui/page.tsx';
import { Badge, ErrorNote, Notice, When } from '../ui/status.tsx';
import { DataTable } from '../ui/table.tsx';

type UserRow = { userId: string; alias: string | null; email: string | null; credits: number; isAdmin: boolean; status: string; createdAt: number };

/**
 * What an operator does for others (the walkthrough's first step): create users with their first
 * token, list them, grant credits. Shown only to operators, and the API refuses everyone else anyway.
 */
export function OperatorSection() {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [rows, setRows] = useState<UserRow[]>([]);
  const users = useLoad(
    async (api) => {
      const page = await dataOf(api.client.GET('/admin/users', { params: { query: { limit: 50, ...(cursor === undefined ? {} : { cursor }) } } }));
      setRows((previous) => (cursor === undefined ? page.users : [...previous, ...page.users]));
      return page;
    },
    [cursor],
  );
  const [email, setEmail] = useState('');
  const [alias, setAlias] = useState('');
  const [credits, setCredits] = useState('100');
  const create = useSubmit((api) =>
    dataOf(
      api.client.POST('/admin/users', {
        body: { ...(email.trim() === '' ? {} : { email: email.trim() }), ...(alias.trim() === '' ? {} : { alias: alias.trim() }), credits: Number(credits) },
      }),
    ),
  );
  const [grantTo, setGrantTo] = useState('');
  const [amount, setAmount] = useState('100');
  const [reason, setReason] = useState('');
  const grant = useSubmit((api) =>
    dataOf(
      api.client.POST('/admin/users/{userId}/credits', {
        params: { path: { userId: grantTo.trim() } },
        body: { amount: Number(amount), reason: reason.trim() || 'operator grant' },
      }),
    ),
  );
  const refresh = () => (cursor === undefined ? users.reload() : setCursor(undefined));
  return (
    <Section title="Users (operator)">
      <p class="muted">You are an operator: you create users and give them credits. A new user's token is shown once; hand it to them.</p>
      <Form
        label="Create a user"
        class="form form-inline"
        onSubmit={async () => {
          if (await create.run()) {
            setEmail('');
            setAlias('');
            refresh();
          }
        }}
      >
        <TextInput label="E-mail" type="email" value={email} onValue={setEmail} />
        <TextInput label="Alias" hint="Optional; the user can set it" value={alias} onValue={setAlias} />
        <TextInput label="Credits" type="number" min={0} value={credits} onValue={setCredits} />
        <Button type="submit" variant="primary" busy={create.busy}>
          Create user
        </Button>
      </Form>
      <ErrorNote error={create.error} />
      {create.result === undefined ? null : (
        <>
          <SecretOnce label={`First token of ${create.result.alias ?? create.result.userId}`} value={create.result.token} />
          <SecretOnce label="Legacy secret key (X-Svc-SecretKey)" value={create.result.secretKey} />
        </>
      )}
      <Form
        label="Grant credits"
        class="form form-inline"
        onSubmit={async () => {
          if (await grant.run()) refresh();
        }}
      >
        <TextInput label="User id" required value={grantTo} onValue={setGrantTo} />
        <TextInput label="Amount" type="number" required value={amount} onValue={setAmount} />
        <TextInput label="Reason" value={reason} onValue={setReason} />
        <Button type="submit" busy={grant.busy}>
          Grant credits
        </Button>
      </Form>
      <ErrorNote error={grant.error ?? users.error} />
      {grant.result === undefined ? null : (
        <Notice tone="success">
          {grant.result.userId} now has {grant.result.credits.toLocaleString()} credits.
        </Notice>
      )}
      <DataTable
        caption="Users"
        rows={rows}
        rowKey={(u) => u.userId}
        empty="No users yet."
        columns={[
          { header: 'User', cell: (u) => u.alias ?? u.email ?? <code>{u.userId}</code> },
          { header: 'Id', cell: (u) => <code>{u.userId}</code>, wide: true },
          { header: 'Credits', cell: (u) => u.credits.toLocaleString() },
          { header: 'Status', cell: (u) => <Badge tone={u.status === 'active' ? 'ok' : 'neutral'}>{u.isAdmin ? `${u.status}, operator` : u.status}</Badge> },
          { header: 'Since', cell: (u) => <When at={u.createdAt} />, wide: true },
          { header: 'Grant', cell: (u) => <Button onClick={() => setGrantTo(u.userId)}>Grant credits</Button> },
        ]}
      />
      {users.data?.nextCursor ? <Button onClick={() => setCursor(users.data?.nextCursor ?? undefined)}>More users</Button> : null}
    </Section>
  );
}
