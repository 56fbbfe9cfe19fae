import { type Static, Type } from 'typebox';

import { IsoSeconds, Nullable } from './common.js';

// Saved logins: an account's named ways into a site behind a sign-in page. What goes in (a
// password, an imported session) is sealed and never shown again: the view says only what the
// login is, where it signs in, and how its last sign-in went.

/** The kinds of login: a form to fill, HTTP Basic credentials, or an imported Playwright storageState. */
export const LOGIN_TYPES = ['form', 'basic', 'storage_state'] as const;
export type LoginType = (typeof LOGIN_TYPES)[number];

/** `form` and `basic`: fields each kind needs (the service names the one missing). */
export const LOGIN_FIELDS_BY_TYPE: Record<LoginType, readonly string[]> = {
  form: ['login_url', 'username', 'password'],
  basic: ['site', 'username', 'password'],
  storage_state: ['storage_state'],
};

const Selector = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description }));

/** A Playwright storageState: cookies, and localStorage per origin. */
export const StorageState = Type.Object(
  {
    cookies: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 256 }),
          value: Type.String({ maxLength: 8192 }),
          domain: Type.String({ minLength: 1, maxLength: 253 }),
          path: Type.Optional(Type.String({ maxLength: 1024 })),
          expires: Type.Optional(Type.Number()),
          httpOnly: Type.Optional(Type.Boolean()),
          secure: Type.Optional(Type.Boolean()),
          sameSite: Type.Optional(Type.Enum(['Strict', 'Lax', 'None'])),
        },
        { additionalProperties: true },
      ),
      { maxItems: 500 },
    ),
    origins: Type.Optional(
      Type.Array(
        Type.Object(
          {
            origin: Type.String({ minLength: 1, maxLength: 2048 }),
            localStorage: Type.Array(Type.Object({ name: Type.String({ maxLength: 1024 }), value: Type.String({ maxLength: 1_000_000 }) }), { maxItems: 1000 }),
          },
          { additionalProperties: true },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: "A Playwright storageState (`context.storageState()`): `cookies` and `origins[].localStorage`; sealed, never shown back",
  },
);

const loginFields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'A name to tell logins apart' }),
  login_url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'form: the sign-in page, http:// or https://' })),
  site: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'basic: the origin the credentials are sent to (scheme, host, port), and to no other' })),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'form and basic; sealed, never shown back' })),
  password: Type.Optional(Type.String({ maxLength: 1024, description: 'form and basic; sealed, never shown back' })),
  username_selector: Selector('form: the user name field; found when absent (the text or e-mail field before the visible password field)'),
  password_selector: Selector('form: the password field; found when absent (the visible password field)'),
  submit_selector: Selector("form: what is clicked to sign in; found when absent (the form's submit button)"),
  success_selector: Selector('form: an element that exists only when signed in'),
  success_url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'form: an address (or its beginning) the app lands on once signed in' })),
  storage_state: Type.Optional(StorageState),
};

/** POST /v1/logins. */
export const LoginCreate = Type.Object(
  { ...loginFields, type: Type.Enum([...LOGIN_TYPES], { description: '`form`, `basic` or `storage_state`' }) },
  { additionalProperties: false },
);
export type LoginCreate = Static<typeof LoginCreate>;

/** PATCH /v1/logins/{id}: any field but the type; a changed password or session signs in afresh. */
export const LoginPatch = Type.Partial(Type.Object(loginFields, { additionalProperties: false }), { additionalProperties: false, minProperties: 1 });
export type LoginPatch = Static<typeof LoginPatch>;

/** Where a login stands: never signed in yet, signed in (a session kept), or its last sign-in failed. */
export const LOGIN_STATES = ['new', 'signed_in', 'failed'] as const;

/** A login as every answer shows it: never a password, a user name or a session. */
export const LoginView = Type.Object(
  {
    id: Type.String({ description: '`login_…`' }),
    name: Type.String(),
    type: Type.Enum([...LOGIN_TYPES]),
    site: Type.String({ description: 'The origin it signs in to' }),
    state: Type.Enum([...LOGIN_STATES]),
    signed_in_at: Nullable(IsoSeconds),
    last_error: Nullable(Type.String({ description: 'Why the last sign-in failed, as the page said it' })),
    created_at: IsoSeconds,
  },
  { additionalProperties: false },
);
export type LoginView = Static<typeof LoginView>;

export const LoginList = Type.Object({ logins: Type.Array(LoginView) }, { additionalProperties: false });

/** The schemas of /v1/logins, named in the OpenAPI document. */
export const LOGIN_SCHEMAS = { Login: LoginView, LoginList };
