/** AGENT_MODEL_HOSTS (the model endpoints agents may reach) and the provider keys a run receives. */
import { describe, expect, it } from 'vitest';
import { modelCredentials, PROVIDER_KEY_VARIABLES } from '../../functions/agents/agent-run-env.ts';
import { ConfigError, DEFAULT_AGENT_MODEL_HOSTS, hostListSetting, parseConfig } from '../../functions/core/config.ts';
import { PUBLIC_RUN_ENV } from '../../functions/runtimes/compute.ts';

const BASE = { TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' };

describe('AGENT_MODEL_HOSTS', () => {
  it('defaults to Bedrock and the public OpenAI, Anthropic and Google APIs', () => {
    // Act
    const config = parseConfig(BASE, []);
    // Assess
    expect(config.AGENT_MODEL_HOSTS).toEqual(['*.amazonaws.com', 'api.openai.com', 'api.anthropic.com', 'generativelanguage.googleapis.com']);
    expect(DEFAULT_AGENT_MODEL_HOSTS).toEqual(config.AGENT_MODEL_HOSTS);
  });

  it('takes the operator list, entries trimmed, a local server as host:port; empty means none', () => {
    // Act
    const listed = parseConfig({ ...BASE, AGENT_MODEL_HOSTS: ' *.amazonaws.com , 127.0.0.1:11434,[::1]:8080,ollama.lan:11434,,*' }, []);
    const none = parseConfig({ ...BASE, AGENT_MODEL_HOSTS: '' }, []);
    // Assess
    expect(listed.AGENT_MODEL_HOSTS).toEqual(['*.amazonaws.com', '127.0.0.1:11434', '[::1]:8080', 'ollama.lan:11434', '*']);
    expect(none.AGENT_MODEL_HOSTS).toEqual([]);
  });

  it('refuses at start an entry the egress proxy could never match, naming it', () => {
    // Prepare
    const bad = {
      'http://127.0.0.1:11434': 'is not a host name',
      '127.0.0.1': 'is an address without a port',
      localhost: 'is an address without a port',
      '[::1]': 'is an address without a port',
      'api.openai.com:0': 'has a port that is not 1 to 65535',
      'api.openai.com:70000': 'has a port that is not 1 to 65535',
      '[::1:8080': 'is not a valid [IPv6]:port entry',
      'two words': 'is not a host name',
    };
    for (const [entry, problem] of Object.entries(bad)) {
      // Act
      const parse = () => parseConfig({ ...BASE, AGENT_MODEL_HOSTS: `*.amazonaws.com,${entry}` }, []);
      // Assess
      expect(parse, entry).toThrow(ConfigError);
      expect(parse, entry).toThrow(`AGENT_MODEL_HOSTS: '${entry}' ${problem}`);
    }
  });

  it('is parsed exactly as MCP_EGRESS_ALLOW_HOSTS is', () => {
    // Act
    const parsed = hostListSetting.safeParse('api.example.com, *.example.org:8443');
    // Assess
    expect(parsed.success && parsed.data).toEqual(['api.example.com', '*.example.org:8443']);
  });
});

describe('provider keys in the run', () => {
  it('gives stored openai, anthropic and gemini keys as the providers’ standard variables, beside the AWS ones', () => {
    // Prepare
    const keys = {
      openai: 'sk-openai-0123456789',
      anthropic: 'sk-ant-0123456789',
      gemini: 'AIza-gemini-0123456789',
      github: 'ghp-not-a-model-key',
      aws_access_key_id: 'AKIAEXAMPLE',
      aws_secret_access_key: 'aws-secret-0123456789',
    };
    // Act
    const env = modelCredentials(keys);
    // Assess
    expect(env).toEqual({
      OPENAI_API_KEY: 'sk-openai-0123456789',
      ANTHROPIC_API_KEY: 'sk-ant-0123456789',
      GEMINI_API_KEY: 'AIza-gemini-0123456789',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-0123456789',
    });
  });

  it('gives a provider key without AWS keys, and nothing for keys that are absent or empty', () => {
    // Act
    const env = modelCredentials({ anthropic: 'sk-ant-0123456789', openai: '', aws_access_key_id: 'AKIAONLYHALF' });
    // Assess
    expect(env).toEqual({ ANTHROPIC_API_KEY: 'sk-ant-0123456789' });
  });

  it('treats every provider variable as a secret of the run (scrubbed from what it prints)', () => {
    // Act
    const names = [...Object.values(PROVIDER_KEY_VARIABLES), 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];
    // Assess
    for (const name of names) expect(PUBLIC_RUN_ENV, name).not.toContain(name);
  });
});
