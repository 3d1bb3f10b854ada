import { useEffect, useState } from 'preact/hooks';
import { dataOf, useLoad, useSubmit } from '../api.ts';
import { Button, ConfirmButton, Form, SecretOnce, TextArea, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, ErrorNote, Notice, When } from '../ui/status.tsx';
import { DataTable } from '../ui/table.tsx';
import { OperatorSection } from './operator.tsx';

export default function Account() {
  const info = useLoad((api) => dataOf(api.client.GET('/user/info')));
  return (
    <Page title="Account">
      <Profile />
      {info.data?.isAdmin ? <OperatorSection /> : null}
      <CreditHistory />
      <Tokens />
      <RoleTokens />
      <Keys />
      <Connections />
    </Page>
  );
}

function Profile() {
  const info = useLoad((api) => dataOf(api.client.GET('/user/info')));
  const [alias, setAlias] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [bio, setBio] = useState('');
  useEffect(() => {
    if (info.data === undefined) return;
    setAlias(info.data.alias ?? '');
    setDisplayName(info.data.displayName ?? '');
    setBio(info.data.bio ?? '');
  }, [info.data]);
  const saveAlias = useSubmit((api) => dataOf(api.client.PUT('/user/alias', { body: { alias: alias.trim() } })));
  const saveProfile = useSubmit((api) =>
    dataOf(api.client.PUT('/user/profile', { body: { displayName: displayName.trim() || null, bio: bio.trim() || null } })),
  );
  return (
    <Section title="Profile">
      <ErrorNote error={info.error} />
      {info.data === undefined ? null : (
        <p class="muted">
          User <code>{info.data.userId}</code>
          {info.data.email === null ? null : <> · {info.data.email}</>} · since <When at={info.data.createdAt} />
          {info.data.isAdmin ? <> · operator</> : null}
        </p>
      )}
      <Form label="Alias" class="form form-inline" onSubmit={async () => (await saveAlias.run()) && info.reload()}>
        <TextInput
          label="Alias"
          hint="Your public name in URLs (sites, shared agents and servers). Needed before you create resources."
          required
          value={alias}
          onValue={setAlias}
        />
        <Button type="submit" busy={saveAlias.busy}>
          Save alias
        </Button>
      </Form>
      <ErrorNote error={saveAlias.error} />
      {saveAlias.result === undefined ? null : <Notice tone="success">{saveAlias.result.message}</Notice>}
      <Form label="Profile" onSubmit={async () => (await saveProfile.run()) && info.reload()}>
        <TextInput label="Display name" value={displayName} onValue={setDisplayName} />
        <TextArea label="Bio" rows={3} value={bio} onValue={setBio} />
        <Button type="submit" busy={saveProfile.busy}>
          Save profile
        </Button>
      </Form>
      <ErrorNote error={saveProfile.error} />
      {saveProfile.result === undefined ? null : <Notice tone="success">Profile saved.</Notice>}
    </Section>
  );
}

function Tokens() {
  const tokens = useLoad((api) => dataOf(api.client.GET('/user/token/list', { params: { query: { includeRevoked: 'true' } } })));
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const create = useSubmit((api) =>
    dataOf(api.client.POST('/user/token/create', { body: { name: name.trim() || undefined, ...(days === '' ? {} : { expiresInDays: Number(days) }) } })),
  );
  const revoke = useSubmit((api, tokenId: string) => dataOf(api.client.POST('/user/token/revoke', { body: { tokenId } })));
  const regenerate = useSubmit((api, tokenId: string) => dataOf(api.client.POST('/user/token/{tokenId}/regenerate', { params: { path: { tokenId } } })));
  const [renaming, setRenaming] = useState<{ tokenId: string; name: string } | null>(null);
  const rename = useSubmit((api, tokenId: string, newName: string) => dataOf(api.client.PUT('/user/token/update', { body: { tokenId, name: newName } })));
  return (
    <Section title="API tokens">
      <p class="muted">Tokens act as you, with everything your account may do. A new token's value is shown once.</p>
      <Form
        label="Create a token"
        class="form form-inline"
        onSubmit={async () => {
          if (await create.run()) {
            setName('');
            tokens.reload();
          }
        }}
      >
        <TextInput label="Name" placeholder="ci" value={name} onValue={setName} />
        <TextInput label="Expires in days" type="number" min={1} max={3650} hint="Empty: never" value={days} onValue={setDays} />
        <Button type="submit" variant="primary" busy={create.busy}>
          Create token
        </Button>
      </Form>
      <ErrorNote error={create.error} />
      {create.result === undefined ? null : <SecretOnce label={`Token “${create.result.name}”`} value={create.result.token} />}
      {regenerate.result === undefined ? null : (
        <SecretOnce label={`New value of “${regenerate.result.name}” (the old one no longer works)`} value={regenerate.result.token} />
      )}
      {renaming === null ? null : (
        <Form
          label="Rename a token"
          class="form form-inline"
          onSubmit={async () => {
            if (await rename.run(renaming.tokenId, renaming.name.trim())) {
              setRenaming(null);
              tokens.reload();
            }
          }}
        >
          <TextInput label="New name" required value={renaming.name} onValue={(name) => setRenaming({ ...renaming, name })} />
          <Button type="submit" busy={rename.busy}>
            Save name
          </Button>
          <Button onClick={() => setRenaming(null)}>Cancel</Button>
        </Form>
      )}
      <ErrorNote error={tokens.error ?? revoke.error ?? regenerate.error ?? rename.error} />
      <DataTable
        caption="API tokens"
        rows={tokens.data?.tokens}
        rowKey={(t) => t.tokenId}
        empty="No tokens."
        columns={[
          { header: 'Name', cell: (t) => t.name },
          { header: 'Starts with', cell: (t) => <code>{t.tokenPrefix}…</code>, wide: true },
          { header: 'Status', cell: (t) => <Badge tone={t.status === 'active' ? 'ok' : 'neutral'}>{t.status}</Badge> },
          { header: 'Last used', cell: (t) => <When at={t.lastUsedAt} />, wide: true },
          { header: 'Expires', cell: (t) => (t.expiresAt === null ? 'never' : <When at={t.expiresAt} />), wide: true },
          {
            header: 'Actions',
            cell: (t) =>
              t.status === 'active' ? (
                <span class="row-actions">
                  <Button onClick={() => setRenaming({ tokenId: t.tokenId, name: t.name })}>Rename</Button>
                  <ConfirmButton
                    label="Regenerate"
                    confirm={`Give ${t.name} a new value? The old one stops working.`}
                    busy={regenerate.busy}
                    onConfirm={async () => (await regenerate.run(t.tokenId)) && tokens.reload()}
                  />
                  <ConfirmButton
                    label="Revoke"
                    confirm={`Revoke ${t.name}?`}
                    busy={revoke.busy}
                    onConfirm={async () => (await revoke.run(t.tokenId)) && tokens.reload()}
                  />
                </span>
              ) : null,
          },
        ]}
      />
    </Section>
  );
}

function RoleTokens() {
  const tokens = useLoad((api) => dataOf(api.client.GET('/role-token/list', { params: { query: { includeRevoked: 'true' } } })));
  const [name, setName] = useState('');
  const [keys, setKeys] = useState('');
  const create = useSubmit((api) =>
    dataOf(
      api.client.POST('/role-token/create', {
        body: {
          name: name.trim(),
          keys: keys
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean),
        },
      }),
    ),
  );
  const revoke = useSubmit((api, tokenId: string) => dataOf(api.client.POST('/role-token/revoke', { body: { tokenId } })));
  return (
    <Section title="Role tokens">
      <p class="muted">A role token lets someone else's code use only the stored keys you name, never your account.</p>
      <Form
        label="Create a role token"
        class="form form-inline"
        onSubmit={async () => {
          if (await create.run()) {
            setName('');
            setKeys('');
            tokens.reload();
          }
        }}
      >
        <TextInput label="Name" required value={name} onValue={setName} />
        <TextInput label="Keys it may use" hint="Service names, separated by commas" value={keys} onValue={setKeys} />
        <Button type="submit" variant="primary" busy={create.busy}>
          Create role token
        </Button>
      </Form>
      <ErrorNote error={create.error ?? revoke.error ?? tokens.error} />
      {create.result === undefined ? null : <SecretOnce label={`Role token “${create.result.name}”`} value={create.result.token} />}
      <DataTable
        caption="Role tokens"
        rows={tokens.data?.roleTokens}
        rowKey={(t) => t.tokenId}
        empty="No role tokens."
        columns={[
          { header: 'Name', cell: (t) => t.name },
          { header: 'Keys', cell: (t) => t.keys.join(', ') || '—' },
          { header: 'Status', cell: (t) => <Badge tone={t.status === 'active' ? 'ok' : 'neutral'}>{t.status}</Badge> },
          { header: 'Last used', cell: (t) => <When at={t.lastUsedAt} />, wide: true },
          {
            header: 'Actions',
            cell: (t) =>
              t.status === 'active' ? (
                <ConfirmButton
                  label="Revoke"
                  confirm={`Revoke ${t.name}?`}
                  busy={revoke.busy}
                  onConfirm={async () => (await revoke.run(t.tokenId)) && tokens.reload()}
                />
              ) : null,
          },
        ]}
      />
    </Section>
  );
}

function Keys() {
  const keys = useLoad((api) => dataOf(api.client.GET('/keys/list')));
  const [serviceName, setServiceName] = useState('');
  const [apiKey, setApiKey] = useState('');
  const store = useSubmit((api) => dataOf(api.client.POST('/keys/store', { body: { serviceName: serviceName.trim(), apiKey } })));
  const remove = useSubmit((api, name: string) => dataOf(api.client.DELETE('/keys/{serviceName}', { params: { path: { serviceName: name } } })));
  return (
    <Section title="Stored keys">
      <p class="muted">Keys for other services, encrypted at rest and given to your agents and actions at run time. Their values are never shown again.</p>
      <Form
        label="Store a key"
        class="form form-inline"
        onSubmit={async () => {
          const stored = await store.run();
          // The value leaves the page as soon as the API has it.
          setApiKey('');
          if (stored) {
            setServiceName('');
            keys.reload();
          }
        }}
      >
        <TextInput label="Service name" placeholder="openai" required value={serviceName} onValue={setServiceName} />
        <TextInput label="Value" type="password" autoComplete="off" required value={apiKey} onValue={setApiKey} />
        <Button type="submit" variant="primary" busy={store.busy}>
          Store key
        </Button>
      </Form>
      <ErrorNote error={store.error ?? remove.error ?? keys.error} />
      {store.result === undefined ? null : <Notice tone="success">Stored {store.result.serviceName}.</Notice>}
      <DataTable
        caption="Stored keys"
        rows={keys.data?.keys}
        rowKey={(k) => k.serviceName}
        empty="No keys stored."
        columns={[
          { header: 'Service', cell: (k) => <code>{k.serviceName}</code> },
          { header: 'Updated', cell: (k) => <When at={k.updatedAt} /> },
          {
            header: 'Actions',
            cell: (k) => (
              <ConfirmButton
                label="Delete"
                confirm={`Delete ${k.serviceName}?`}
                busy={remove.busy}
                onConfirm={async () => (await remove.run(k.serviceName)) && keys.reload()}
              />
            ),
          },
        ]}
      />
    </Section>
  );
}

function CreditHistory() {
  const credits = useLoad((api) => dataOf(api.client.GET('/user/credits')));
  return (
    <Section title="Credits">
      <ErrorNote error={credits.error} />
      {credits.data === undefined ? null : (
        <p>
          <strong>{credits.data.credits.toLocaleString()}</strong> credits; {credits.data.monthlyFreeCredits.toLocaleString()} granted each month.
        </p>
      )}
      <DataTable
        caption="Recent credit entries"
        rows={credits.data?.recentEntries}
        rowKey={(e) => e.entryId}
        empty="No credit entries yet."
        columns={[
          { header: 'When', cell: (e) => <When at={e.createdAt} /> },
          { header: 'Change', cell: (e) => (e.amount > 0 ? `+${e.amount.toLocaleString()}` : e.amount.toLocaleString()) },
          { header: 'Balance', cell: (e) => e.balanceAfter.toLocaleString(), wide: true },
          { header: 'Reason', cell: (e) => e.reason },
          { header: 'Run', cell: (e) => (e.requestId === null ? '—' : <a href={`#/logs/${encodeURIComponent(e.requestId)}`}>Open</a>), wide: true },
        ]}
      />
    </Section>
  );
}

const PROVIDERS = ['provider_a', 'provider_b', 'provider_c'] as const;

/** OAuth: the provider's consent page, whose callback stores the tokens as keys (`<provider>_refresh`, ...). */
function Connections() {
  const connect = useSubmit(async (api, provider: (typeof PROVIDERS)[number]) => {
    const started = await dataOf(api.client.GET('/oauth/authorize/{provider}', { params: { path: { provider } } }));
    location.assign(started.authorizationUrl);
    return started;
  });
  return (
    <Section title="Connected services">
      <p class="muted">
        Connect an account at a provider the operator configured: its consent page opens, and the tokens it grants are stored as keys above (never shown).
      </p>
      <div class="row-actions">
        {PROVIDERS.map((provider) => (
          <Button key={provider} busy={connect.busy} onClick={() => void connect.run(provider)}>
            Connect {provider}
          </Button>
        ))}
      </div>
      <ErrorNote error={connect.error} />
    </Section>
  );
}
