/**
 * AWS Signature V4 for REST catalogs behind AWS (S3 Tables' `https://s3tables.<region>.amazonaws.com/iceberg`
 * signs as `s3tables`, Glue's `https://glue.<region>.amazonaws.com/iceberg` as `glue`), as Iceberg Java's
 * RESTSigV4Signer does: the body's SHA-256 goes in `x-amz-content-sha256`, and the path is signed in its
 * wire form (the signer encodes it once more, as every AWS service but S3 expects).
 */
import { createHash } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { LakeError } from '../../errors.js';
import { registerSecret } from '../../redact.js';
import type { RestAuth, RestRequest } from './rest-auth.js';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

export interface SigV4Options {
  /** @default AWS_REGION, then AWS_DEFAULT_REGION */
  region?: string;
  /** The service name in the credential scope. @default 'execute-api' (Iceberg Java's default) */
  signingName?: string;
  /** @default the SDK's default credential chain */
  credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
  /** Signing time, for tests. @default now */
  signingDate?: () => Date;
}

/** Signs every request with SigV4. */
export class SigV4Auth implements RestAuth {
  readonly region: string;
  readonly signingName: string;
  private readonly signer: SignatureV4;

  /** @throws LakeError when no region is configured */
  constructor(private readonly options: SigV4Options = {}) {
    const region = options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
    if (!region) throw new LakeError('SigV4 signing needs a region: set AWS_REGION or pass one');
    this.region = region;
    this.signingName = options.signingName ?? 'execute-api';
    const given = options.credentials ?? defaultProvider();
    // Whatever credentials sign, redact.ts knows them: no echo of a secret key or session token reaches a message.
    const credentials = async (): Promise<AwsCredentials> => {
      const resolved = typeof given === 'function' ? await given() : given;
      registerSecret(resolved.secretAccessKey);
      registerSecret(resolved.sessionToken);
      return resolved;
    };
    this.signer = new SignatureV4({ service: this.signingName, region, credentials, sha256: Sha256 });
  }

  /** @throws LakeError when credentials cannot be resolved */
  async authorize(request: RestRequest): Promise<void> {
    const body = request.body ?? '';
    const headers: Record<string, string> = {
      ...request.headers,
      host: request.url.host,
      'x-amz-content-sha256': createHash('sha256').update(body).digest('hex'),
    };
    const query: Record<string, string | string[]> = {};
    for (const [key, value] of request.url.searchParams) {
      const existing = query[key];
      query[key] =
        existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
    let signed: { headers: Record<string, string> };
    try {
      signed = await this.signer.sign(
        {
          method: request.method,
          protocol: request.url.protocol,
          hostname: request.url.hostname,
          port: request.url.port ? Number(request.url.port) : undefined,
          path: request.url.pathname,
          query,
          headers,
          body: request.body,
        },
        { signingDate: this.options.signingDate?.() },
      );
    } catch (error) {
      throw new LakeError(`SigV4 signing failed: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    // fetch sets Host itself from the URL; the signed value is the same.
    for (const [name, value] of Object.entries(signed.headers)) {
      if (name.toLowerCase() !== 'host') request.headers[name.toLowerCase()] = value;
    }
  }
}
