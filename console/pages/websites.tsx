import { Page } from '../ui/page.tsx';

// Being built: replaced by the page itself.
export default function Placeholder() {
  return <Page title="websites">Not built yet.</Page>;
}
