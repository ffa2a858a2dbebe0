import BrightnessAutoIcon from '@mui/icons-material/BrightnessAuto';
import DarkModeIcon from '@mui/icons-material/DarkMode';
import LightModeIcon from '@mui/icons-material/LightMode';
import TranslateIcon from '@mui/icons-material/Translate';
import {
  Avatar,
  Box,
  Divider,
  FormControlLabel,
  IconButton,
  ListItemButton,
  ListItemIcon,
  ListItemText,
  Menu,
  MenuItem,
  Switch,
  Tooltip,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { signOut, useInfo, useLoginOptions, useUser } from '../api/session';
import { LanguageMenu } from '../components/LanguageMenu';
import { type AccountDialog, AccountDialogs } from '../features/users/AccountDialogs';
import { languages } from '../i18n/languages';
import { type ThemeMode, useThemeMode } from './theme';

/** Drawer footer: dark-mode switch, theme (light/dark/system), language menu, user menu. */
export function DrawerFooter() {
  const { t, i18n } = useTranslation();
  const navigate = useNavigate();
  const { mode, isDark, setMode } = useThemeMode();
  const user = useUser().data;
  const info = useInfo().data;
  // Offered when the server allows it, and to a user who has it on (to turn it off) whatever the setting.
  const offersTotp = !!useLoginOptions().data?.auth_methods?.totp || !!user?.totp;
  const [langMenu, setLangMenu] = useState<HTMLElement | null>(null);
  const [themeMenu, setThemeMenu] = useState<HTMLElement | null>(null);
  const [userMenu, setUserMenu] = useState<HTMLElement | null>(null);
  const [dialog, setDialog] = useState<AccountDialog | null>(null);
  const language = languages.find((l) => l.code === i18n.language) ?? languages[0];
  const themeIcons: Record<ThemeMode, typeof LightModeIcon> = {
    light: LightModeIcon,
    dark: DarkModeIcon,
    system: BrightnessAutoIcon,
  };
  const ThemeIcon = themeIcons[mode];

  return (
    <Box sx={{ p: 1 }}>
      <Box sx={{ display: 'flex', alignItems: 'center', px: 1 }}>
        <FormControlLabel
          sx={{ flex: 1, mr: 0 }}
          control={<Switch checked={isDark} onChange={(e) => setMode(e.target.checked ? 'dark' : 'light')} />}
          label={t('app.darkMode')}
        />
        <Tooltip title={t('app.theme')}>
          <IconButton aria-label={t('app.theme')} onClick={(e) => setThemeMenu(e.currentTarget)}>
            <ThemeIcon fontSize="small" />
          </IconButton>
        </Tooltip>
      </Box>
      <Menu anchorEl={themeMenu} open={!!themeMenu} onClose={() => setThemeMenu(null)}>
        {(['light', 'dark', 'system'] as const).map((m) => {
          const Icon = themeIcons[m];
          return (
            <MenuItem
              key={m}
              selected={mode === m}
              onClick={() => {
                setThemeMenu(null);
                setMode(m);
              }}
            >
              <ListItemIcon>
                <Icon fontSize="small" />
              </ListItemIcon>
              <ListItemText>{t(`app.theme_${m}`)}</ListItemText>
            </MenuItem>
          );
        })}
      </Menu>
      <ListItemButton
        aria-label={t('app.language')}
        aria-haspopup="menu"
        onClick={(e) => setLangMenu(e.currentTarget)}
        sx={{ borderRadius: 2, flexGrow: 0 }}
      >
        <ListItemIcon>
          <TranslateIcon fontSize="small" />
        </ListItemIcon>
        <ListItemText>{language.name}</ListItemText>
      </ListItemButton>
      <LanguageMenu anchor={langMenu} onClose={() => setLangMenu(null)} />
      <ListItemButton
        aria-label={t('app.userMenu')}
        aria-haspopup="menu"
        onClick={(e) => setUserMenu(e.currentTarget)}
        sx={{ borderRadius: 2, flexGrow: 0 }}
      >
        <ListItemIcon>
          <Avatar sx={{ width: 24, height: 24, fontSize: 13 }}>{user?.name?.[0]?.toUpperCase()}</Avatar>
        </ListItemIcon>
        <ListItemText
          primary={user?.name}
          secondary={user?.username}
          slotProps={{ primary: { noWrap: true } }}
        />
      </ListItemButton>
      <Menu anchorEl={userMenu} open={!!userMenu} onClose={() => setUserMenu(null)}>
        <Box sx={{ px: 2, py: 1 }}>
          <Typography variant="body2" sx={{ fontWeight: 700 }}>
            {t('app.title')}
          </Typography>
          <Typography variant="caption" color="text.secondary">
            {t('app.version', { version: info?.version ?? '…' })}
          </Typography>
        </Box>
        <Divider />
        {user?.admin && (
          <MenuItem
            onClick={() => {
              setUserMenu(null);
              navigate('/users');
            }}
          >
            {t('app.users')}
          </MenuItem>
        )}
        {user?.admin && (
          <MenuItem
            onClick={() => {
              setUserMenu(null);
              navigate('/runners');
            }}
          >
            {t('runners.menu')}
          </MenuItem>
        )}
        {user?.admin && (
          <MenuItem
            onClick={() => {
              setUserMenu(null);
              navigate('/activity');
            }}
          >
            {t('activity.menu')}
          </MenuItem>
        )}
        <MenuItem
          onClick={() => {
            setUserMenu(null);
            setDialog('account');
          }}
        >
          {t('app.editAccount')}
        </MenuItem>
        <MenuItem
          onClick={() => {
            setUserMenu(null);
            setDialog('password');
          }}
        >
          {t('app.changePassword')}
        </MenuItem>
        <MenuItem
          onClick={() => {
            setUserMenu(null);
            setDialog('tokens');
          }}
        >
          {t('tokens.menu')}
        </MenuItem>
        {offersTotp && (
          <MenuItem
            onClick={() => {
              setUserMenu(null);
              setDialog('totp');
            }}
          >
            {t('totp.menu')}
          </MenuItem>
        )}
        <Divider />
        <MenuItem onClick={() => void signOut()}>{t('app.signOut')}</MenuItem>
      </Menu>
      {user && <AccountDialogs user={user} open={dialog} onClose={() => setDialog(null)} />}
    </Box>
  );
}
