import { PageTitle } from '../components/page-title.js';
import { BASE, Link } from '../router.js';

export function NotFound() {
  return (
    <section>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is no dashboard page at this address. Go to the <Link href={BASE}>Overview</Link>.
      </p>
    </section>
  );
}
