"""Sign-in limits (a2ui.web.logins): lockouts per account and per address, audited, ending by
themselves; password checks in a thread of their own and bounded per process."""

import threading
import time

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse

from a2ui.infra import shared
from a2ui.models import AuditEvent
from a2ui.web import logins

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fast_hashes(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def post(client, url, username, password):
    return client.post(url, {"username": username, "password": password})


def wait_unlocked(username, address="127.0.0.1", timeout=10):
    keys = [key for key, *_ in logins.scopes(username, address)]
    deadline = time.monotonic() + timeout
    while async_to_sync(shared.locked_for)(keys) > 0:
        assert time.monotonic() < deadline, "the lock did not end"
        time.sleep(0.1)


def test_sixty_wrong_passwords_lock_the_account_until_the_lock_ends(settings):
    settings.A2UI = {**settings.A2UI, "LOGIN_LOCKOUT_SECONDS": 3}
    get_user_model().objects.create_user("carol", "c@example.com", "right-pw-123")
    client, url = Client(), reverse("a2ui_web:login")
    answers = [post(client, url, "carol", f"wrong-{i}").status_code for i in range(60)]
    assert answers[:9] == [200] * 9  # the form again, "wrong password"
    assert answers[9] == 429  # the tenth locks
    refused = post(client, url, "carol", "right-pw-123")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "Sign-in is locked until" in refused.content.decode()
    assert "_auth_user_id" not in client.session
    event = AuditEvent.objects.filter(action="login.lockout", target_type="account").get()
    assert event.target_id == "carol" and event.details["failures"] == 10
    wait_unlocked("carol")
    accepted = post(client, url, "carol", "right-pw-123")
    assert accepted.status_code == 302 and "_auth_user_id" in client.session


def test_a_right_password_forgets_the_failures(settings):
    get_user_model().objects.create_user("dave", "d@example.com", "right-pw-123")
    client, url = Client(), reverse("a2ui_web:login")
    for _ in range(2):
        for i in range(9):
            assert post(client, url, "dave", f"wrong-{i}").status_code == 200
        assert post(client, url, "dave", "right-pw-123").status_code == 302
        client.logout()
    assert not AuditEvent.objects.filter(action="login.lockout").exists()


def test_an_address_is_locked_after_failures_on_many_accounts(settings):
    settings.A2UI = {**settings.A2UI, "LOGIN_FAILURES_PER_ADDRESS": 5}
    get_user_model().objects.create_user("erin", "e@example.com", "right-pw-123")
    client, url = Client(REMOTE_ADDR="198.51.100.3"), reverse("a2ui_web:login")
    for i in range(5):
        post(client, url, f"nobody-{i}", "guess")
    refused = post(client, url, "erin", "right-pw-123")
    assert refused.status_code == 429 and "Sign-in is locked until" in refused.content.decode()
    event = AuditEvent.objects.get(action="login.lockout", target_type="address")
    assert event.target_id == "198.51.100.3"
    # Another address signs in; so does a trusted proxy's (loopback), never locked as one.
    other = Client(REMOTE_ADDR="192.0.2.7")
    assert post(other, url, "erin", "right-pw-123").status_code == 302
    proxy = Client()  # 127.0.0.1
    for i in range(6):
        post(proxy, url, f"someone-{i}", "guess")
    assert post(proxy, url, "erin", "right-pw-123").status_code == 302


def test_the_admin_login_is_locked_too(settings):
    settings.A2UI = {**settings.A2UI, "LOGIN_LOCKOUT_SECONDS": 3}
    get_user_model().objects.create_user("frank", "f@example.com", "right-pw-123",
                                         is_staff=True, is_superuser=True)
    client, url = Client(), reverse("admin:login")
    for i in range(60):
        post(client, url, "frank", f"wrong-{i}")
    refused = post(client, url, "frank", "right-pw-123")
    assert refused.status_code == 429
    assert "Sign-in is locked until" in refused.content.decode()
    assert "_auth_user_id" not in client.session
    assert AuditEvent.objects.filter(action="login.lockout", target_id="frank").count() == 1
    wait_unlocked("frank")
    assert post(client, url, "frank", "right-pw-123").status_code == 302


def test_password_checks_are_capped_per_process(settings):
    """At most LOGIN_CONCURRENT_CHECKS sign-ins are checked at once; one that waits more than
    LOGIN_CHECK_WAIT_SECONDS for its place is answered 503 with Retry-After, unchecked."""
    settings.A2UI = {**settings.A2UI, "LOGIN_CONCURRENT_CHECKS": 2,
                     "LOGIN_CHECK_WAIT_SECONDS": 0.3}
    running, most, lock = [0], [0], threading.Lock()

    def slow_login(request):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(1.0)  # a password hash
        with lock:
            running[0] -= 1
        return HttpResponse("ok")

    view = logins.guarded(slow_login)
    answers = []

    def sign_in(name):
        request = RequestFactory().post("/login/", {"username": name, "password": "x"})
        answers.append(view(request))

    threads = [threading.Thread(target=sign_in, args=(f"user{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(a.status_code for a in answers) == [200, 200, 503, 503]
    busy = next(a for a in answers if a.status_code == 503)
    assert busy["Retry-After"] == "1" and b"try again" in busy.content
    assert most[0] == 2


async def test_under_asgi_the_lockout_holds(settings):
    from django.test import AsyncClient

    await sync_to_async(get_user_model().objects.create_user)(
        "gina", "g@example.com", "right-pw-123")
    client, url = AsyncClient(), reverse("a2ui_web:login")
    for i in range(12):
        await client.post(url, {"username": "gina", "password": f"wrong-{i}"})
    refused = await client.post(url, {"username": "gina", "password": "right-pw-123"})
    assert refused.status_code == 429 and "Sign-in is locked until" in refused.content.decode()
    assert await AuditEvent.objects.filter(action="login.lockout", target_id="gina").acount() == 1


def test_redis_away_lets_sign_ins_through(settings, caplog):
    """The limits protect the sign-in; an unreachable Redis must not refuse everyone."""
    get_user_model().objects.create_user("kim", "k@example.com", "right-pw-123")
    settings.A2UI = {**settings.A2UI, "REDIS_URL": "redis://127.0.0.1:1/0"}
    client, url = Client(), reverse("a2ui_web:login")
    assert post(client, url, "kim", "wrong").status_code == 200
    assert post(client, url, "kim", "right-pw-123").status_code == 302
    assert any("sign-in limits" in r.getMessage() for r in caplog.records), caplog.text
