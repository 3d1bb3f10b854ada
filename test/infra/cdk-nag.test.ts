/**
 * cdk-nag's AWS Solutions and Serverless rule packs over the platform as the tests synthesize it
 * (the prod preset): no finding is left unacknowledged, and each acknowledgement has its reason
 * (lib/cloud/nag-acknowledgements.ts). The dev preset's run is in deploy-options.test.ts, on its
 * own synth.
 */
import { describe, expect, it } from 'vitest';
import { acknowledgements, unacknowledgedFindings } from './nag.ts';
import { synthPlatform } from './synth-platform.ts';

describe('cdk-nag (AwsSolutions and Serverless packs)', () => {
  it('finds nothing unacknowledged in the prod preset', () => {
    // Prepare
    const { stack } = synthPlatform();

    // Act
    const findings = unacknowledgedFindings(stack);

    // Assess
    expect(stack.options.preset).toBe('prod');
    expect(findings).toEqual([]);
  });

  it('gives every acknowledgement a reason of its own', () => {
    // Prepare
    const { stack } = synthPlatform();

    // Act
    // The packs' rules only: CDK acknowledges some of its own validation rules the same way.
    const acks = acknowledgements(stack).filter((a) => /^(AwsSolutions|Serverless)-/.test(a.id));

    // Assess
    expect(acks.length).toBeGreaterThan(20);
    for (const a of acks) expect(a.reason.length, `${a.id} at ${a.path}`).toBeGreaterThan(40);
  });
});
