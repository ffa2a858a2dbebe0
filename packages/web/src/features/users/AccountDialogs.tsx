import type { User } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { PasswordDialog } from './PasswordDialog';
import { UserDialog } from './UserDialog';

/** The signed-in user's own dialogs: edit account and change password. */
export function AccountDialogs({
  user,
  open,
  onClose,
}: {
  user: User;
  open: 'account' | 'password' | null;
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
    </>
  );
}
