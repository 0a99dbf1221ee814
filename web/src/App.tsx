import { lazy, type ReactNode, Suspense, useEffect } from 'react';
import { Navigate, Route, Routes, useNavigate } from 'react-router';
import { setNavigator } from './api/client';
import { useMe } from './api/hooks';
import { AccountPage } from './account/AccountPage';
import { SignInPage, TelegramReturn } from './auth/SignInPage';
import { useBootstrapExchange } from './auth/bootstrap';
import { SubscriptionPage } from './connect/SubscriptionPage';
import { GamePage } from './game/GamePage';
import { Loading } from './layout/Loading';
import { Shell } from './layout/Shell';
import { PlansPage } from './plans/PlansPage';
import { SupportPage, TicketPage } from './support/SupportPage';
import { useRememberedPartner } from './syndicate/partner-link';
import { SyndicatePage } from './syndicate/SyndicatePage';

// The staff console is its own chunk: subscribers never download it.
const StaffArea = lazy(() => import('./staff/StaffArea'));

/** Pages that need a signed-in account; anyone else goes to the sign-in page. */
function RequireUser({ children }: { children: ReactNode }) {
  const me = useMe();
  if (me.isPending) return <Loading />;
  if (!me.data) return <Navigate to="/" replace />;
  return children;
}

export function App() {
  const navigate = useNavigate();
  useEffect(() => setNavigator((path) => void navigate(path)), [navigate]);
  const exchanging = useBootstrapExchange();
  useRememberedPartner();
  if (exchanging) return <Loading />;

  const user = (page: ReactNode) => <RequireUser>{page}</RequireUser>;
  return (
    <Routes>
      {/* A subscription link opened in a browser: no session, so none of the app's chrome. */}
      <Route path="/sub/:token" element={<SubscriptionPage />} />
      <Route
        path="*"
        element={
          <Shell>
            <Routes>
              <Route path="/" element={<SignInPage />} />
              <Route path="/telegram-login" element={<TelegramReturn />} />
              <Route path="/account" element={user(<AccountPage />)} />
              <Route path="/plans" element={<PlansPage />} />
              <Route path="/syndicate" element={user(<SyndicatePage />)} />
              <Route path="/support" element={user(<SupportPage />)} />
              <Route path="/support/:id" element={user(<TicketPage />)} />
              <Route path="/game" element={user(<GamePage />)} />
              <Route
                path="/staff/*"
                element={
                  <Suspense fallback={<Loading />}>
                    <StaffArea />
                  </Suspense>
                }
              />
              <Route path="*" element={<Navigate to="/" replace />} />
            </Routes>
          </Shell>
        }
      />
    </Routes>
  );
}
