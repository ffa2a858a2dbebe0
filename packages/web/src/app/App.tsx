import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { SnackbarProvider } from 'notistack';
import { BrowserRouter } from 'react-router';
import { ApiError, baseUrl } from '../api/client';
import { AppRoutes } from './routes';
import { AppThemeProvider } from './theme';

// A session that ends while the app is open (expired, signed out elsewhere) goes back to the sign-in page.
function onError(err: unknown) {
  if (
    err instanceof ApiError &&
    err.status === 401 &&
    !window.location.pathname.startsWith(`${baseUrl}/auth/`)
  )
    window.location.assign(`${baseUrl}/auth/login`);
}

const queryClient = new QueryClient({
  // The session query itself is handled by SessionRoot (which keeps the query string on the way to sign-in).
  queryCache: new QueryCache({ onError: (err, query) => query.queryKey[0] !== 'user' && onError(err) }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      refetchOnWindowFocus: false,
      staleTime: 5_000,
      retry: (count, err) => count < 1 && !('status' in (err as object)),
    },
  },
});

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <AppThemeProvider>
        <SnackbarProvider
          maxSnack={3}
          autoHideDuration={3000}
          anchorOrigin={{ vertical: 'bottom', horizontal: 'center' }}
        >
          <BrowserRouter basename={baseUrl || undefined}>
            <AppRoutes />
          </BrowserRouter>
        </SnackbarProvider>
      </AppThemeProvider>
    </QueryClientProvider>
  );
}
