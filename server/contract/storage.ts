import { type Static, Type } from 'typebox';

import { IsoSeconds } from './common.js';

// An account's storage destination: the customer's own S3-compatible bucket a job's image is
// also uploaded to when the request asks for it (`upload`, `storage_path`). The credentials
// go in once and are never shown again: the view names the bucket, not the secret.

/** Longest `storage_path` template of a request and `prefix` of a destination, characters. */
export const MAX_STORAGE_PATH_LENGTH = 512;

/** PUT /admin/api/accounts/{id}/storage. */
export const StorageDestinationPut = Type.Object(
  {
    endpoint: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'The S3 endpoint, http:// or https:// (e.g. https://s3.eu-west-1.amazonaws.com, https://minio.example.net:9000); ' +
        'no user name, password, query or fragment. The upload reaches it through the egress guard, like a page',
    }),
    bucket: Type.String({
      minLength: 3,
      maxLength: 63,
      description: 'Bucket name: 3-63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit, not an IP address',
    }),
    prefix: Type.Optional(
      Type.String({
        maxLength: MAX_STORAGE_PATH_LENGTH,
        description: 'Key prefix the objects are put under (no leading /, no .. segment); default none',
      }),
    ),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$', default: 'us-east-1', description: 'Signing region' })),
    access_key_id: Type.String({ minLength: 1, maxLength: 256, description: 'Sealed with the secret; shown afterwards only masked' }),
    secret_access_key: Type.String({ minLength: 1, maxLength: 1024, description: 'Sealed; never shown again, never logged' }),
    path_style: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Path-style addressing (endpoint/bucket/key), as MinIO, Ceph and most non-AWS services expect; false: bucket.endpoint/key (AWS)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type StorageDestinationPut = Static<typeof StorageDestinationPut>;

/** GET (and PUT's answer) /admin/api/accounts/{id}/storage: the destination without its secret. */
export const StorageDestination = Type.Object(
  {
    account_id: Type.String(),
    endpoint: Type.String(),
    bucket: Type.String(),
    prefix: Type.String({ description: "'' when none" }),
    region: Type.String(),
    path_style: Type.Boolean(),
    access_key_id: Type.String({ description: 'Masked: its first and last four characters (all masked when shorter than 12)' }),
    updated_at: IsoSeconds,
  },
  { additionalProperties: false },
);
export type StorageDestination = Static<typeof StorageDestination>;
