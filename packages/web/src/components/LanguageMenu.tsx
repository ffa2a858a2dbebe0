import { Menu, MenuItem } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { setLanguage } from '../i18n';
import { languages } from '../i18n/languages';

/** The 12 languages; the choice is remembered in local storage. */
export function LanguageMenu({ anchor, onClose }: { anchor: HTMLElement | null; onClose: () => void }) {
  const { i18n } = useTranslation();
  return (
    <Menu anchorEl={anchor} open={!!anchor} onClose={onClose}>
      {languages.map((l) => (
        <MenuItem
          key={l.code}
          lang={l.code}
          selected={i18n.language === l.code}
          onClick={() => {
            onClose();
            void setLanguage(l.code);
          }}
        >
          {l.name}
        </MenuItem>
      ))}
    </Menu>
  );
}
