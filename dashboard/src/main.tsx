import { render } from 'preact';
import { App } from './app.js';
import { LocationProvider } from './router.js';
import './styles.css';

render(
  <LocationProvider>
    <App />
  </LocationProvider>,
  document.getElementById('app') as HTMLElement,
);
