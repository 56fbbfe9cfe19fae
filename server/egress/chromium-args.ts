/**
 * Chromium switches that route every connection of the browser through the egress proxy.
 * `<-loopback>` removes Chromium's built-in rule that sends localhost and 127.0.0.1 around
 * the proxy, which would otherwise be the easiest way past the guard. WebRTC may only use UDP
 * when it can be proxied (it cannot through an HTTP proxy), so STUN/TURN cannot reach a
 * denied address directly; QUIC is off so nothing speaks UDP to the web at all.
 * Contexts must also be created with `serviceWorkers: 'block'`.
 */
export function egressChromiumArgs(proxyUrl: string): string[] {
  return [
    `--proxy-server=${proxyUrl}`,
    '--proxy-bypass-list=<-loopback>',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--disable-quic',
  ];
}
