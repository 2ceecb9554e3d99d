// Errors in human words: what happened and what the person can do, never a raw code. The code
// stays in the console (and in `data-code` on the toast, for support and tests).
import { gettext as _, interpolate } from './i18n.js';
import { isObject, plain } from './dom.js';

/** `{title, message}` for a JSON-RPC error object the server sent. */
export function describeError(err) {
  const code = isObject(err) ? Number(err.code) : NaN;
  const data = isObject(err) && isObject(err.data) ? err.data : {};
  const reason = typeof data.reason === 'string' ? plain(data.reason).slice(0, 300) : '';
  switch (code) {
    case -32010:
      return {
        title: _('Your consent is needed'),
        message: _('This needs your consent first. Give it under “Your consent” at the top of the page, then try again.'),
      };
    case -32001:
      return { title: _('Too many at once'), message: _('You are sending faster than the assistant accepts. Wait a moment, then try again.') };
    case -32002:
      return { title: _('Too large to send'), message: _('This is larger than the assistant accepts. Try a smaller file or a shorter text.') };
    case -32602:
    case -32003:
      return {
        title: _('Not accepted'),
        message: reason
          ? interpolate(_('The assistant could not accept this: %(reason)s'), { reason })
          : _('The assistant could not accept this. Check what you entered and try again.'),
      };
    case -32004:
      return { title: _('Time is up'), message: _('This question is no longer open: its time ran out.') };
    case -32000:
    case -32005:
      return { title: _('Conversation ended'), message: _('This conversation is over. Reload the page to start a new one.') };
    case -32006:
      return { title: _('Signed out'), message: _('Your sign-in is no longer valid. Sign in again, then reload the page.') };
    case -32007:
      return { title: _('Too many open pages'), message: _('Close other tabs or windows with the assistant, or try again later.') };
    case -32603:
      return { title: _('Something went wrong'), message: _('The server had a problem with this. Try again in a moment.') };
    case -32600:
    case -32601:
    case -32700:
      return { title: _('Something went wrong'), message: _('This page and the server did not understand each other. Reload the page; if it happens again, tell the site’s team.') };
    default:
      return { title: _('Something went wrong'), message: _('Try again in a moment. If it happens again, reload the page.') };
  }
}

/** The sentence of an error, for inline places (a form's status, the chat box). */
export function errorSentence(err) {
  if (isObject(err) && err.closed) return _('The connection was lost before the answer came. It will be sent again when you retry.');
  if (isObject(err) && err.notConnected) return _('Not connected: nothing was sent. Try again when the connection is back.');
  return describeError(err).message;
}
