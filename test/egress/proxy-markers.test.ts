import { describe, expect, it } from 'vitest';
import { egressDenial } from '../../server/egress/proxy-markers.js';

describe('egress proxy markers', () => {
  it("reads the proxy's reason from a plain-HTTP response", () => {
    expect(egressDenial('http://a.test/x.png', { 'x-egress-denied': '127.0.0.2 is a loopback address' })).toBe(
      '127.0.0.2 is a loopback address',
    );
    expect(egressDenial('HTTP://a.test/', { 'x-egress-denied': ' ' })).toBe('denied');
    expect(egressDenial('http://a.test/', { 'content-type': 'text/html' })).toBeNull();
  });

  it('ignores the header on an https response: it came through a tunnel the proxy cannot write into, so from the page', () => {
    expect(egressDenial('https://a.test/', { 'x-egress-denied': 'fake' })).toBeNull();
    expect(egressDenial('wss://a.test/', { 'x-egress-denied': 'fake' })).toBeNull();
  });
});
