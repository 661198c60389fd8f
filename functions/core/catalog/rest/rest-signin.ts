/**
 * Which authentication the REST catalog client uses, and how the server's `GET /v1/config` answer changes
 * it. As in Iceberg Java (RESTSessionCatalog: an init session from the client's properties for the config
 * call, then `authManager.catalogSession(client, mergedProps)`) and PyIceberg (`_fetch_config` with a
 * session from the client's properties, then `_create_session()` again from the merged ones), the config
 * call signs in with the client's own settings, and every later request with the merged ones:
 * `oauth2-server-uri`, `scope`, `audience` and `resource` (and `uri`, which moves the default token
 * endpoint `${uri}/v1/oauth/tokens`). A server default applies only where the client set nothing; a
 * server override wins over the client.
 *
 * Two deliberate differences:
 * - `credential` and `token` are never taken from the server: floe's secrets come from its operator.
 * - the client secret is posted only to an origin the operator named (the catalog `uri`'s or the
 *   `oauth2-server-uri` they set). A config that moves the token endpoint elsewhere is refused, as a
 *   redirect of the token request is (rest-auth.ts): otherwise whoever answers `GET /v1/config` could
 *   collect the secret of an identity provider the catalog itself never sees.
 */
import { redactUrl } from '../../redact.js';
import {
  bearerAuth,
  noAuth,
  OAuth2ClientCredentials,
  type OAuth2Settings,
  type RestAuth,
} from './rest-auth.js';
import { clientProperties, maxResponseBytesOf, type RestCatalogOptions } from './rest-config.js';
import { RestAuthError } from './rest-errors.js';
import { SigV4Auth } from './rest-sigv4.js';

/** The token request's settings from (merged) catalog properties. */
export function oauth2SettingsOf(
  properties: Record<string, string>,
  options: RestCatalogOptions,
): OAuth2Settings {
  const uri = (properties.uri || options.uri).replace(/\/+$/, '');
  return {
    tokenUri: properties['oauth2-server-uri'] || `${uri}/v1/oauth/tokens`,
    scope: properties.scope || 'catalog',
    audience: properties.audience || undefined,
    resource: properties.resource || undefined,
    params: options.oauth2Params,
    clientAuth: options.oauth2ClientAuth,
  };
}

/** The authentication the options ask for: `auth`, else SigV4, else OAuth2, else a bearer token, else none. */
export class RestSignIn {
  /** What signs the config call (and everything after, unless the config changes the settings). */
  readonly initial: RestAuth;
  private readonly settings: OAuth2Settings | undefined;

  /** @throws LakeError for OAuth2 settings that cannot work (see OAuth2ClientCredentials) */
  constructor(private readonly options: RestCatalogOptions) {
    if (options.auth) this.initial = options.auth;
    else if (options.sigv4) this.initial = new SigV4Auth(options.sigv4 === true ? {} : options.sigv4);
    else if (options.credential) {
      this.settings = oauth2SettingsOf(clientProperties(options), options);
      this.initial = this.oauth2(this.settings);
    } else this.initial = options.token ? bearerAuth(options.token) : noAuth;
  }

  /**
   * The authentication for the requests after the config call, when the merged properties change the
   * token request; undefined when the initial one stays (and keeps its token).
   * @throws RestAuthError (not retryable) when the config moves the token endpoint to an origin the
   * operator did not name
   */
  afterConfig(merged: Record<string, string>): RestAuth | undefined {
    if (this.settings === undefined) return undefined;
    const settings = oauth2SettingsOf(merged, this.options);
    if (sameSettings(settings, this.settings)) return undefined;
    const target = originOf(settings.tokenUri);
    const trusted = [this.options.uri, this.settings.tokenUri].map(originOf);
    if (target === undefined || !trusted.includes(target)) {
      throw new RestAuthError(
        `the catalog's config (GET /v1/config) moves the OAuth2 token endpoint to ${target === undefined ? 'an unparsable URI' : redactUrl(target)}; floe posts the client secret only to the catalog's origin or to the oauth2-server-uri you set. If you trust that endpoint, set oauth2-server-uri (--oauth2-server-uri, FLOE_REST_OAUTH2_SERVER_URI, the construct prop oauth2ServerUri) to it`,
        { retryable: false },
      );
    }
    return this.oauth2(settings);
  }

  private oauth2(settings: OAuth2Settings): OAuth2ClientCredentials {
    return new OAuth2ClientCredentials({
      ...settings,
      credential: this.options.credential ?? '',
      timeoutMs: this.options.timeoutMs,
      maxResponseBytes: maxResponseBytesOf(this.options),
      now: this.options.now,
    });
  }
}

function sameSettings(a: OAuth2Settings, b: OAuth2Settings): boolean {
  return (
    a.tokenUri === b.tokenUri && a.scope === b.scope && a.audience === b.audience && a.resource === b.resource
  );
}

function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
}
