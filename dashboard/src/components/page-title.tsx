import { useEffect, useRef } from 'preact/hooks';

/**
 * The page's heading and the window title. After a navigation, focus moves to the heading, so
 * keyboard and screen-reader users start at the new page rather than on the link they left.
 */
export function PageTitle({ children }: { children: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${children} · Waytrack`;
    if (document.activeElement && document.activeElement !== document.body && heading.current) {
      heading.current.focus({ preventScroll: true });
    }
  }, [children]);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}
