import { z } from 'zod';
import { flag, messages, requiredString } from './common';

export type User = {
  id: number;
  created: string;
  name: string;
  username: string;
  email: string;
  admin: boolean;
  alert: boolean;
  external: boolean;
  can_create_project: boolean;
};

const password = z
  .string({ error: messages.required('Password') })
  .min(1, messages.required('Password'))
  .max(255, messages.tooLong('Password', 255));

const email = z
  .string({ error: messages.required('Email') })
  .trim()
  .min(1, messages.required('Email'))
  .max(255, messages.tooLong('Email', 255))
  // name@host: a host without a dot (admin@localhost, the first-start admin) is a valid address too.
  .regex(/^[^\s@]+@[^\s@]+$/, 'Email must be a valid e-mail address');

const username = requiredString('Username', 255).regex(/^[^\s]+$/, 'Username must not contain spaces');

export const userCreateInput = z.object({
  name: requiredString('Name', 255),
  username,
  email,
  password,
  admin: flag('Admin'),
  alert: flag('Alert'),
  external: flag('External'),
  can_create_project: flag('Can create project'),
});

/** An optional flag of an update: absent keeps the stored value. */
const keepFlag = (label: string) =>
  z
    .boolean({ error: `${label} must be true or false` })
    .nullish()
    .transform((v) => v ?? undefined);

/**
 * Update (PUT users/{id}): name, username and email are required as on create; absent flags keep their stored
 * value; an absent or empty password keeps the password (POST users/{id}/password is the usual way).
 */
export const userUpdateInput = z.object({
  name: requiredString('Name', 255),
  username,
  email,
  admin: keepFlag('Admin'),
  alert: keepFlag('Alert'),
  can_create_project: keepFlag('Can create project'),
  password: z
    .string({ error: 'Password must be a string' })
    .max(255, messages.tooLong('Password', 255))
    .nullish()
    .transform((v) => (v ? v : undefined)),
});

export const passwordInput = z.object({ password });
export type UserCreateInput = z.infer<typeof userCreateInput>;
export type UserUpdateInput = z.infer<typeof userUpdateInput>;
