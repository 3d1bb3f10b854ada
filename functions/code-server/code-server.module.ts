import * as z from 'zod';
import { defineArea, providePort } from '../../lib/manifest/define.ts';
import type { KernelPorts } from '../ports.ts';
import { createAwsMachines } from '../adapters/machines/aws.ts';
import { createUnavailableMachines } from '../adapters/machines/local.ts';
import { createCodeServerStore, type CodeServerStore } from './code-server.store.ts';
import type { Machines } from './machines.ts';

/**
 * Code servers (SPEC 4.12, parts 2, 3, 7, 8): one browser IDE per user on an EC2 instance, for
 * starter and professional plans, billed per minute of running time through the billed-run use
 * case by a tick every 5 minutes. The machines are EC2 and SSM (functions/adapters/machines/aws.ts)
 * in the cloud and, with CODE_SERVER_BACKEND=ec2, locally; without a backend every route but the
 * catalogue answers 503 CODE_SERVER_UNAVAILABLE. Decision 0044 says how `{code_url}` is routed.
 */
export const codeServerArea = defineArea({
  name: 'code-server',
  routes: [
    { method: 'GET', path: '/code-server/status', handler: 'get-status', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/code-server/instance-types', handler: 'get-instance-types', auth: 'required', callers: 'role' },
    { method: 'POST', path: '/code-server/launch', handler: 'launch-code-server', auth: 'required' },
    { method: 'POST', path: '/code-server/start', handler: 'start-code-server', auth: 'required' },
    { method: 'POST', path: '/code-server/stop', handler: 'stop-code-server', auth: 'required' },
    { method: 'POST', path: '/code-server/terminate', handler: 'terminate-code-server', auth: 'required' },
    { method: 'POST', path: '/code-server/setup', handler: 'run-setup', auth: 'required' },
    { method: 'POST', path: '/code-server/save-setup-script', handler: 'save-setup-script', auth: 'required' },
    // The operator's "tick now" (issue 36): the scheduled tick's work at the platform's time.
    { method: 'POST', path: '/admin/code-server/billing-tick', handler: 'run-billing-tick', auth: 'admin', timeoutSec: 120 },
  ],
  entryPoints: [{ kind: 'schedule', handler: 'billing-tick', expression: 'rate(5 minutes)', timeoutSec: 240 }],
  tables: [
    // One item per user (one instance each, SPEC part 8); `byBilling` holds only those accruing
    // running time (a sparse index), so the tick reads the running ones and never scans.
    { name: 'code-servers', partitionKey: 'userId', indexes: [{ name: 'byBilling', partitionKey: 'billing', sortKey: 'userId' }] },
  ],
  provides: {
    codeServers: providePort<CodeServerStore>({ tables: ['code-servers'] }, ({ db, clock }: KernelPorts) => createCodeServerStore(db, clock)),
    machines: providePort<Machines>({ machines: true }, ({ config }: KernelPorts): Machines =>
      config.CODE_SERVER_BACKEND === 'ec2' ? createAwsMachines(config) : createUnavailableMachines(),
    ),
  },
  uses: ['users', 'credits', 'usageLogs', 'secretBox', 'keysReader'],
  settings: {
    CODE_SERVER_BACKEND: z
      .enum(['none', 'ec2'])
      .default('none')
      .meta({ description: 'Where code servers run: `ec2` (EC2 and SSM at the AWS SDK endpoints) or `none` (their routes answer 503)', setBy: 'stack' }),
    AWS_ENDPOINT_URL_EC2: z.url().optional().describe("EC2's endpoint, e.g. the moto server (the AWS SDK's own setting; AWS's when absent)"),
    AWS_ENDPOINT_URL_SSM: z.url().optional().describe("SSM's endpoint, e.g. the moto server (the AWS SDK's own setting; AWS's when absent)"),
    CODE_SERVER_AMI_PARAMETER: z
      .string()
      .min(1)
      .default('/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64')
      .describe('The SSM public parameter naming the current Amazon Linux AMI code servers launch from'),
    CODE_SERVER_SUBNET_ID: z
      .string()
      .min(1)
      .optional()
      .describe("The public subnet code server instances launch in (the default VPC's default subnet when absent)"),
    CODE_SERVER_SECURITY_GROUP_ID: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Code server instances' security group (HTTPS to the IDE only)", setBy: 'stack' }),
    CODE_SERVER_INSTANCE_PROFILE: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Code server instances' instance profile (SSM's agent, and reading a setup run's environment)", setBy: 'stack' }),
  },
});
