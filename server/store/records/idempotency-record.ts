/** What a request with an Idempotency-Key was answered: its status and its JSON body. */
export interface KeptAnswer {
  status: number;
  body: unknown;
}

/**
 * One Idempotency-Key of one account, as the idempotency store keeps it: claimed by a request in
 * flight (no `answer` yet), or that request's answer, kept for the retries. Times are epoch ms.
 */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the account, the endpoint and the key: never the key itself. */
  _id: string;
  account_id: string;
  /** SHA-256 (hex) of the request body, its keys in a fixed order: the same body, however spelt. */
  fingerprint: string;
  /** Set by the request that claimed the key; only it may store the answer or give the key up. */
  claim: string;
  /** The answer, once the request that claimed the key has it. */
  answer?: KeptAnswer;
  /** In flight: until when the claim holds (a request cut off by a stop holds it no longer). With an answer: when it is forgotten. */
  until: number;
  created_at: number;
}
