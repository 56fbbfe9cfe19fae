import { describe, expect, it } from 'vitest';

import { createEgressPolicy, HostNotFoundError, type Resolver } from '../../server/egress/policy.js';

/** A resolver that answers a public address and remembers every name it was asked. */
function countingResolver(): { resolve: Resolver; asked: string[] } {
  const asked: string[] = [];
  return { asked, resolve: async (host) => (asked.push(host), [{ address: '93.184.216.34', family: 4 }]) };
}

describe('egress policy and reserved names', () => {
  it.each([
    'http://html.invalid/',
    'http://html.invalid/img/a.png',
    'https://HTML.INVALID./x',
    'http://invalid/',
    'http://deep.name.invalid:8080/',
    'http://hidden-service.onion/',
  ])('fails %s as a name that does not resolve, without a lookup', async (url) => {
    const { resolve, asked } = countingResolver();
    const policy = createEgressPolicy({ allow: [], denyLan: false }, { resolve, localAddresses: () => [] });
    const err = await policy.checkUrl(url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostNotFoundError);
    expect(asked).toEqual([]);
  });

  it('refuses a CONNECT to a .invalid host without a lookup', async () => {
    const { resolve, asked } = countingResolver();
    const policy = createEgressPolicy({ allow: [], denyLan: false }, { resolve, localAddresses: () => [] });
    await expect(policy.checkHost('html.invalid', 443)).rejects.toBeInstanceOf(HostNotFoundError);
    expect(asked).toEqual([]);
  });

  it('looks up .test and .example names and names that only contain "invalid", as any other', async () => {
    const { resolve, asked } = countingResolver();
    const policy = createEgressPolicy({ allow: [], denyLan: false }, { resolve, localAddresses: () => [] });
    for (const url of ['http://a.test/', 'http://a.example/', 'http://invalid.example.com/', 'http://notinvalid/']) {
      await expect(policy.checkUrl(url)).resolves.toMatchObject({ address: '93.184.216.34' });
    }
    expect(asked).toEqual(['a.test', 'a.example', 'invalid.example.com', 'notinvalid']);
  });
});
