import type { Socket } from 'node:net';

import { ERROR_TITLES } from './api/error-responses.js';

/** How Node's HTTP parser failures are answered: the status, and what to tell the client. */
const PARSER_ANSWERS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'The request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request was not received in time'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'The request has too large chunk extensions'],
};

/**
 * Answers a request Node's HTTP parser refused (too large headers, bytes that are not HTTP)
 * with the same `{error, message}` JSON as every other error, where Node would send an empty
 * body. A connection already answering, or already gone, is only closed.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (err.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  const [status, message] = PARSER_ANSWERS[err.code ?? ''] ?? [400, 'The request is not valid HTTP'];
  const title = ERROR_TITLES[status] ?? 'Bad request';
  const body = JSON.stringify({ error: title, message });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Cache-Control: no-store\r\n' +
      'X-Content-Type-Options: nosniff\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
}
