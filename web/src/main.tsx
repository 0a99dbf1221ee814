import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import { createTheme, InputWrapper, MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { queryClient } from './api/client';
import { App } from './App';
import { I18nProvider } from './i18n/i18n';

// Shade 8 keeps white text on filled buttons at a 4.5:1 contrast; autoContrast picks dark text on
// light fills (a yellow badge).
// Field descriptions in gray 7 rather than the default dimmed gray, which is under 4.5:1 on white.
const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: 8,
  autoContrast: true,
  // Dialogs and menus appear without motion for those who ask their system for less of it.
  respectReducedMotion: true,
  components: {
    InputWrapper: InputWrapper.extend({
      styles: { description: { color: 'var(--mantine-color-gray-7)' } },
    }),
  },
});

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light">
      <Notifications position="top-center" />
      <QueryClientProvider client={queryClient}>
        <I18nProvider>
          <BrowserRouter>
            <App />
          </BrowserRouter>
        </I18nProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
