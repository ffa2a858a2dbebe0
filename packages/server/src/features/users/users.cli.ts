import { parseArgs } from 'node:util';
import { codeOfIssue, errorMessage, userCreateInput, userUpdateInput } from '@signalbox/contracts';
import { ZodError } from 'zod';
import type { DbHandle } from '../../db';
import { AppError } from '../../lib/errors';
import { resetTotp } from '../auth';
import { clearSignInLock } from './sign-in-lock';
import { type Actor, createUser, deleteUser, updateUser } from './users.service';
import { findUserByLogin, listUsers } from './users.store';

/** `signalbox user …` — the commands the sign-in help dialog shows. Returns the exit code. */
export async function runUserCommand(handle: DbHandle, argv: string[]): Promise<number> {
  // `user totp disable`: the peer's two-word command.
  const [sub, ...args] = argv[0] === 'totp' ? [`totp ${argv[1] ?? ''}`.trim(), ...argv.slice(2)] : argv;
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args);
  } catch (err) {
    // An unknown or malformed flag: say which, without a stack trace.
    return fail((err as Error).message);
  }
  const { values } = parsed;
  const ctx = { db: handle.db, dialect: handle.dialect };
  // Commands typed on the server console act as an administrator; events name no user.
  const serverConsole: Actor = { user: null };

  try {
    switch (sub) {
      case 'add': {
        const input = userCreateInput.parse(
          {
            username: values.login,
            name: values.name ?? values.login,
            email: values.email,
            // External users sign in through their provider: no password is stored for them.
            password: values.password ?? null,
            admin: values.admin,
            external: values.external,
            can_create_project: values.admin,
          },
          { reportInput: true },
        );
        // On the console a forgotten --password is a mistake, not a user of LDAP or OIDC (who is --external);
        // the API creates users without one.
        if (!input.password && !input.external) return fail('Password is required');
        const user = await createUser(ctx, serverConsole, input);
        console.log(`User ${user.username} added (id ${user.id})`);
        return 0;
      }
      case 'list': {
        const users = (await listUsers(ctx.db)).sort((a, b) => a.username.localeCompare(b.username));
        for (const u of users)
          console.log(
            [u.username, u.name, u.email, u.admin ? 'admin' : '', u.external ? 'external' : '']
              .join('\t')
              .trimEnd(),
          );
        return 0;
      }
      case 'change-by-login': {
        if (!values.login) return fail('--login is required');
        const user = await findUserByLogin(ctx.db, values.login);
        if (!user) return fail(`User ${values.login} not found`);
        if (!values.name && !values.email && !values.password)
          return fail('Nothing to change: give --password, --name or --email');
        // Only the given flags change; the rest is sent back as stored.
        const input = userUpdateInput.parse(
          {
            name: values.name ?? user.name,
            username: user.username,
            email: values.email ?? user.email,
            password: values.password,
          },
          { reportInput: true },
        );
        await updateUser(ctx, serverConsole, user.id, input);
        console.log(`User ${user.username} changed`);
        return 0;
      }
      case 'delete': {
        if (!values.login) return fail('--login is required');
        const user = await findUserByLogin(ctx.db, values.login);
        if (!user) return fail(`User ${values.login} not found`);
        await deleteUser(ctx, serverConsole, user.id);
        console.log(`User ${user.username} deleted`);
        return 0;
      }
      case 'unlock': {
        if (!values.login) return fail('--login is required');
        const user = await findUserByLogin(ctx.db, values.login);
        if (!user) return fail(`User ${values.login} not found`);
        await clearSignInLock(ctx, serverConsole, user.id);
        console.log(`Sign-in lock of user ${user.username} cleared`);
        return 0;
      }
      case 'totp disable': {
        if (!values.login) return fail('--login is required');
        const user = await findUserByLogin(ctx.db, values.login);
        if (!user) return fail(`User ${values.login} not found`);
        if (!(await resetTotp(ctx, serverConsole, user)))
          return fail(`User ${user.username} has no two-factor sign-in`);
        console.log(`Two-factor sign-in of user ${user.username} reset`);
        return 0;
      }
      default:
        return fail('Usage: npx signalbox user add|list|change-by-login|delete|unlock|totp disable');
    }
  } catch (err) {
    // Each problem in the words the API would use (a missing value is "required": the parse reports the input).
    if (err instanceof ZodError) return fail(err.issues.map((i) => errorMessage(codeOfIssue(i))).join('; '));
    if (err instanceof AppError) return fail(err.message);
    throw err;
  }
}

function fail(message: string) {
  console.error(message);
  return 1;
}

function parseOptions(args: string[]) {
  return parseArgs({
    args,
    options: {
      login: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      admin: { type: 'boolean', default: false },
      external: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
}
