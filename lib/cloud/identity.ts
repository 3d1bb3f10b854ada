import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccountRecovery, UserPool, type UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

export interface PlatformIdentityProps {
  /** Name of the user pool, shown in the Cognito console. */
  readonly userPoolName: string;
}

/**
 * Cloud sign-in: a Cognito user pool with email as the user name, and one public app client whose
 * ID tokens the functions verify (aws-jwt-verify, `tokenUse: 'id'`).
 */
export class PlatformIdentity extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;

  constructor(scope: Construct, id: string, props: PlatformIdentityProps) {
    super(scope, id);
    this.userPool = new UserPool(this, 'UserPool', {
      userPoolName: props.userPoolName,
      signInAliases: { email: true },
      signInCaseSensitive: false,
      selfSignUpEnabled: true,
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      // Accounts are user data: deleting the stack must not delete them.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.client = this.userPool.addClient('AppClient', {
      // Browsers and the CLI cannot keep a secret.
      generateSecret: false,
      authFlows: { userSrp: true },
      preventUserExistenceErrors: true,
      // No hosted UI domain yet; without this CDK would enable OAuth flows with placeholder callbacks.
      disableOAuth: true,
    });
  }
}
