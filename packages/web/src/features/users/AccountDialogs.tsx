import type { User } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { ApiTokensDialog } from './ApiTokensDialog';
import { PasswordDialog } from './PasswordDialog';
import { UserDialog } from './UserDialog';

/** The signed-in user's own dialogs: edit account, change password and API tokens. */
export type AccountDialog = 'account' | 'password' | 'tokens';

export function AccountDialogs({
  user,
  open,
  onClose,
}: {
  user: User;
  open: AccountDialog | null;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  return (
    <>
      <UserDialog
        open={open === 'account'}
        user={user}
        adminEditor={user.admin}
        title={t('app.editAccount')}
        onClose={onClose}
      />
      <PasswordDialog open={open === 'password'} user={user} onClose={onClose} />
      <ApiTokensDialog open={open === 'tokens'} onClose={onClose} />
    </>
  );
}
