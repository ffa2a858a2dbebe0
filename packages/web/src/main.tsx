import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { initI18n } from './i18n';
import { codeZodIssues } from './i18n/messages';

codeZodIssues();
const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

void initI18n().then(() => {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
});
