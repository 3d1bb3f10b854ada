import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccountRecovery, Mfa, UserPool, type UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

export interface PlatformIdentityProps {
  /** Name of the user pool, shown in the Cognito console. */
  readonly userPoolName: string;
  /** Anyone may sign up through Cognito; otherwise only operators create accounts (AdminCreateUser, `agent-platform cloud invite`). @default false */
  readonly selfSignUp?: boolean;
  /** @default RemovalPolicy.RETAIN: accounts are user data */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * Cloud sign-in: a Cognito user pool with email as the user name, and one public app client whose
 * ID tokens the functions verify (aws-jwt-verify, `tokenUse: 'id'`). The client allows SRP (browsers
 * with the Amplify libraries) and the plain password flow over TLS (USER_PASSWORD_AUTH), which the
 * AWS CLI and `agent-platform login --stack` use; sign-up is closed unless the stage opens it, and
 * operators invite people (an emailed temporary password, changed at the first sign-in).
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
      selfSignUpEnabled: props.selfSignUp ?? false,
      userInvitation: {
        emailSubject: 'Your agent platform account',
        emailBody:
          'An operator created an account for {username}. Sign in with the temporary password {####} (for example `agent-platform login --stack <stack> --email {username}`); you will choose your own at the first sign-in.',
      },
      // Optional TOTP: anyone may add an authenticator app (the CLI answers its challenge); SMS costs money per message.
      mfa: Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
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
      // Accounts are user data: deleting the stack must not delete them, unless it is a dev stage.
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      deletionProtection: (props.removalPolicy ?? RemovalPolicy.RETAIN) === RemovalPolicy.RETAIN,
    });
    this.client = this.userPool.addClient('AppClient', {
      // Browsers and the CLI cannot keep a secret.
      generateSecret: false,
      // The password flow sends the password to Cognito over TLS, as SRP's browser libraries would
      // send a proof: what the AWS CLI and the platform's CLI can do without an SRP implementation.
      authFlows: { userSrp: true, userPassword: true },
      preventUserExistenceErrors: true,
      // No hosted UI domain yet; without this CDK would enable OAuth flows with placeholder callbacks.
      disableOAuth: true,
    });
  }
}
