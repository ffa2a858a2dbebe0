import type { User } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { ApiTokensDialog } from './ApiTokensDialog';
import { PasswordDialog } from './PasswordDialog';
import { TwoFactorDialog } from './TwoFactorDialog';
import { UserDialog } from './UserDialog';

/** The signed-in user's own dialogs: edit account, change password, API tokens and two-factor sign-in. */
export type AccountDialog = 'account' | 'password' | 'tokens' | 'totp';

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
      <TwoFactorDialog open={open === 'totp'} user={user} onClose={onClose} />
    </>
  );
}
