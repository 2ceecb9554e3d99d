// A host project's own components (tests/browser/test_extend.py): renderers registered through
// the client's public API, imported by its import-map name.
import { h, registerComponent, registerV09Component, text } from 'a2ui/client';

registerComponent('rating', (data, ctx) => {
  const stars = Number(data.stars) || 0;
  const rate = h('button', { type: 'button', class: 'a2ui-btn', dataset: { rate: '' } }, 'Rate 5');
  rate.addEventListener('click', () => ctx.respond({ stars: 5 }));
  return h('div', { class: 'shop-rating', role: 'group', 'aria-label': `${text(data.title)}: ${stars} of 5` },
    h('strong', {}, text(data.title)), ' ', h('span', { class: 'shop-stars', 'aria-hidden': 'true' }, '★'.repeat(stars)), ' ', rate);
});

registerV09Component('https://example.com/catalogs/shop.json', 'Rating', (props) =>
  h('p', { class: 'shop-v09-rating', dataset: { stars: String(props.stars ?? 0) } },
    `${props.label}: `, '★'.repeat(Number(props.stars) || 0)));
