import { ValidationError } from '../domain-errors.js';

// The one check of an address a customer or the admin gives: a job's url and base_url (through
// POST /v1/screenshot, render links, MCP tools and monitors alike), a job's or a monitor's
// callback_url, a storage destination's endpoint, the settings' public_base_url. It says whether
// the address is acceptable to keep; where a browser or an upload may then connect is the egress
// policy's decision, made on what is actually routed (egress/policy.ts).

/**
 * Text before the host that ends with `@`, however the address spells its slashes (`//`, `\\`,
 * one or none: the URL parser reads them all alike): a user name, a password, or an empty
 * userinfo. Tabs and newlines are dropped first, as the parser drops them.
 */
const USERINFO = /^[a-z][a-z\d+.-]*:[\\/]*[^\\/?#]*@/i;

/** Where a field's credentials belong instead of its address, said in its refusal. */
const CREDENTIALS_INSTEAD: Record<string, string> = {
  url: 'send credentials in http_auth, which is kept sealed and never shown',
  base_url: 'send credentials in http_auth, which is kept sealed and never shown',
  callback_url: "authenticate webhooks by their webhook-signature header (signed with the account's webhook secret) instead",
  endpoint: 'give access_key_id and secret_access_key',
  public_base_url: 'it begins every link the appliance answers, so it would reach every client',
};

/**
 * An http(s) address, normalised, without credentials: a 400 naming `field` otherwise.
 *
 * An address may not carry a user name or password (`http://user:pw@host/`, or an empty
 * `@`): it is stored, shown in the status resource, the admin API and the panel, and sent in
 * webhooks, so a password there would be in clear in all of them (and a callback's would be
 * sent as Basic auth to wherever it points).
 */
export function httpUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ValidationError(`${field} is not a valid URL; it must include the scheme http:// or https://`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(`${field} must use the scheme http:// or https://`, field);
  }
  if (!url.hostname) throw new ValidationError(`${field} has no host`, field);
  if (url.username !== '' || url.password !== '' || USERINFO.test(value.trim().replace(/[\t\n\r]/g, ''))) {
    const instead = CREDENTIALS_INSTEAD[field] ?? 'give credentials in their own fields';
    throw new ValidationError(`${field} may not contain a user name or password (user:password@); ${instead}`, field);
  }
  return url.href;
}
