import { lazy, type ReactNode, Suspense, useEffect } from 'react';
import { Navigate, Route, Routes, useNavigate } from 'react-router';
import { setNavigator } from './api/client';
import { useMe } from './api/hooks';
import { AccountPage } from './account/AccountPage';
import { SignInPage, TelegramReturn } from './auth/SignInPage';
import { useBootstrapExchange } from './auth/bootstrap';
import { SubscriptionPage } from './connect/SubscriptionPage';
import { GamePage } from './game/GamePage';
import type { MessageKey } from './i18n/en';
import { Loading } from './layout/Loading';
import { NotFoundPage } from './layout/NotFoundPage';
import { Shell } from './layout/Shell';
import { Titled } from './layout/title';
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

  const user = (content: ReactNode) => <RequireUser>{content}</RequireUser>;
  const page = (title: MessageKey, content: ReactNode) => <Titled title={title}>{content}</Titled>;
  return (
    <Routes>
      {/* A subscription link opened in a browser: no session, so none of the app's chrome. */}
      <Route path="/sub/:token" element={page('sub.title', <SubscriptionPage />)} />
      <Route
        path="*"
        element={
          <Shell>
            <Routes>
              <Route path="/" element={page('signIn.title', <SignInPage />)} />
              <Route path="/telegram-login" element={page('signIn.title', <TelegramReturn />)} />
              <Route path="/account" element={page('account.title', user(<AccountPage />))} />
              <Route path="/plans" element={page('plans.title', <PlansPage />)} />
              <Route path="/syndicate" element={page('syndicate.title', user(<SyndicatePage />))} />
              <Route path="/support" element={page('support.title', user(<SupportPage />))} />
              <Route path="/support/:id" element={page('support.title', user(<TicketPage />))} />
              <Route path="/game" element={page('game.title', user(<GamePage />))} />
              <Route
                path="/staff/*"
                element={page(
                  'staff.title',
                  <Suspense fallback={<Loading />}>
                    <StaffArea />
                  </Suspense>,
                )}
              />
              <Route path="*" element={page('notFound.title', <NotFoundPage />)} />
            </Routes>
          </Shell>
        }
      />
    </Routes>
  );
}
