/**
 * An account's storage destination as the stores keep it: one per account, keyed by the
 * account's id. The credentials (access key id and secret) are sealed together (SecretBox);
 * only a masked form of the access key id is kept in clear, for the admin to recognise it.
 */
export interface DestinationRecord {
  /** The account's id. */
  _id: string;
  endpoint: string;
  bucket: string;
  /** '' when none; never with a leading or trailing slash. */
  prefix: string;
  region: string;
  path_style: boolean;
  /** The access key id, masked (maskedKeyId). */
  access_key_hint: string;
  /** SecretBox of `{access_key_id, secret_access_key}`. */
  sealed_credentials: string;
  /** Epoch milliseconds. */
  updated_at: number;
}
