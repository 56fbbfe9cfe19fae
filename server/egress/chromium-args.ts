/**
 * Chromium switches that route every connection of the browser through the egress proxy.
 * `<-loopback>` removes Chromium's built-in rule that sends localhost and 127.0.0.1 around
 * the proxy, which would otherwise be the easiest way past the guard.
 *
 * WebRTC may only use UDP when it can be proxied, which it cannot through an HTTP proxy, so a
 * page cannot send STUN/TURN datagrams straight to a denied address (measured: without this,
 * `new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.2:…'}]})` reaches the target).
 * Headless Chromium reads `--webrtc-ip-handling-policy`; a headed one only the `--force-` form.
 * QUIC is off so nothing else speaks UDP to the web.
 *
 * Contexts must also be created with `serviceWorkers: 'block'`.
 */
export function egressChromiumArgs(proxyUrl: string): string[] {
  return [
    `--proxy-server=${proxyUrl}`,
    '--proxy-bypass-list=<-loopback>',
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--disable-quic',
  ];
}
