/**
 * MSK IAM authentication: Amazon MSK's IAM listeners (TLS, port 9098) take SASL/OAUTHBEARER with a
 * token that is a SigV4-signed `kafka-cluster:Connect` URL, made by AWS's maintained signer
 * (`aws-msk-iam-sasl-signer-js`) from the default credential chain. The signer pulls in the AWS SDK's
 * STS client and credential providers, so it is imported only when a client actually uses MSK IAM.
 */
import { LakeError } from '../errors.js';

/** What the signer's `generateAuthToken` resolves to (its `GenerateAuthTokenResponse`). */
export interface MskAuthToken {
  token: string;
  /** Epoch milliseconds. */
  expiryTime: number;
}

export type GenerateMskAuthToken = (options: { region: string }) => Promise<MskAuthToken>;

/**
 * A token is reused until this long before it expires. The signer's tokens live 15 minutes (less when
 * the credentials expire sooner); kafkajs asks again on every new broker connection and before the
 * broker's session lifetime ends, and leaves reuse and refresh to the provider.
 */
export const MSK_TOKEN_REFRESH_MARGIN_MS = 60_000;

/** Thrown when no MSK IAM token could be signed (no credentials, no signer package). */
export class MskIamAuthError extends LakeError {
  constructor(message: string, options: { cause?: unknown; retryable: boolean }) {
    super(message, options);
  }
}

/** @throws MskIamAuthError when the signer package cannot be loaded (not retryable: install it) */
export async function loadMskSigner(): Promise<GenerateMskAuthToken> {
  try {
    const signer: { generateAuthToken?: GenerateMskAuthToken; default?: { generateAuthToken?: unknown } } =
      await import('aws-msk-iam-sasl-signer-js');
    // A CommonJS package: its named exports may only be on the default export under some loaders.
    const generate = signer.generateAuthToken ?? signer.default?.generateAuthToken;
    if (typeof generate !== 'function') throw new Error('it has no generateAuthToken');
    return generate as GenerateMskAuthToken;
  } catch (cause) {
    throw new MskIamAuthError(
      `--sasl-mechanism aws-msk-iam needs the package aws-msk-iam-sasl-signer-js, which could not be loaded: ${(cause as Error).message}`,
      { cause, retryable: false },
    );
  }
}

/**
 * kafkajs's `oauthBearerProvider` for MSK IAM: one token shared by every connection of the client,
 * signed again once it is within the refresh margin of its expiry; concurrent connections wait for one
 * signing instead of each signing their own.
 */
export function mskIamTokenProvider(
  generate: GenerateMskAuthToken,
  region: string,
  now: () => number = Date.now,
): () => Promise<{ value: string }> {
  let current: MskAuthToken | undefined;
  let signing: Promise<MskAuthToken> | undefined;
  return async () => {
    if (current && current.expiryTime - now() > MSK_TOKEN_REFRESH_MARGIN_MS) return { value: current.token };
    signing ??= generate({ region })
      .then((token) => {
        current = token;
        return token;
      })
      .catch((cause: unknown) => {
        throw new MskIamAuthError(
          `MSK IAM: could not sign an auth token for region ${region} with the default AWS credential chain: ${(cause as Error)?.message ?? cause} (check the credentials and region; kafkajs retries the connection)`,
          { cause, retryable: true },
        );
      })
      .finally(() => {
        signing = undefined;
      });
    return { value: (await signing).token };
  };
}
