import { Page } from '../ui/page.tsx';

// Being built: replaced by the page itself.
export default function Placeholder() {
  return <Page title="knowledge">Not built yet.</Page>;
}
