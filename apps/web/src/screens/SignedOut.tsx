import { useEffect } from 'react';
import { signInHref } from '../session.ts';

/** Shown at any address while signed out: sign-in brings the user back to that address. */
export function SignedOutScreen({ returnTo, signedIn }: { returnTo: string; signedIn: boolean }) {
  useEffect(() => {
    document.title = 'Sign in · hostctl';
  }, []);
  const signInPath = signInHref(signedIn ? '/' : returnTo);
  return (
    <main id="main" className="centered signed-out">
      <h1>Sign in to hostctl</h1>
      <p>{signedIn ? 'You are signed in.' : 'You are signed out.'} Sign in to manage your services.</p>
      {/* A button, not a link: signing in is an action. Not a form either: the CSP's form-action
          'self' would stop the redirect from the API's sign-in route on to the provider. */}
      <button type="button" className="primary" onClick={() => window.location.assign(signInPath)}>
        Sign in
      </button>
    </main>
  );
}
