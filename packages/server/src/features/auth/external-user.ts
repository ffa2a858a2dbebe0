import { recordEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { transaction } from '../../db/transaction';
import { insertUser } from '../users';

/**
 * Creates a user who signs in through a directory or an identity provider (`via`: "LDAP", the provider's name): no
 * password, no admin rights, stored with the event of their creation in one transaction. Returns the user's id.
 */
export function createExternalUser(
  deps: { db: Db; dialect: Dialect },
  user: { username: string; name: string; email: string },
  via: string,
): Promise<number> {
  return transaction(deps.db, async (trx) => {
    const userId = await insertUser(trx, deps.dialect, {
      ...user,
      password: '',
      admin: false,
      alert: false,
      external: true,
      can_create_project: false,
    });
    await recordEvent(trx, {
      project_id: null,
      user_id: userId,
      object_type: 'user',
      object_id: userId,
      description: `User ${user.username} created (signed in with ${via})`,
    });
    return userId;
  });
}
