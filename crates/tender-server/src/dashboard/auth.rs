//! Logging in and out, changing the password, and the test/live switch.
//!
//! The login form has no session to take a CSRF token from, so it uses a double-submit cookie:
//! `GET /dashboard/login` sets a random `tender_login` cookie and puts the same value in the
//! form; `POST` accepts the form only if the two match. Failed logins are throttled per e-mail
//! (see [`super::throttle`]).

use axum::extract::{Query, Request, State};
use axum::http::{header, StatusCode};
use axum::response::Response;
use maud::{html, Markup};
use serde::Deserialize;
use tender_core::auth::{secrets_equal, Mode};
use tender_core::error::CoreError;
use tender_core::ids::random_base62;

use super::layout::{self, bare_page, csrf_field, html_response, page, Notice, Section};
use super::{
    cookie_value, read_form, see_other, user_message, DashError, DashboardState, PageResult,
    Posted, Session, LOGIN_COOKIE, SESSION_COOKIE,
};

/// A login form's token lives this long (it only has to outlast typing a password).
const LOGIN_TOKEN_SECS: i64 = 3600;

fn login_form(token: &str, email: &str, notice: &Notice) -> maud::Markup {
    bare_page(
        "Log in",
        html! {
            section.card {
                h1 { "Log in to your account" }
                (notice)
                form method="post" action="/dashboard/login" {
                    input type="hidden" name="csrf_token" value=(token);
                    div.field {
                        label for="email" { "E-mail" }
                        input #email type="email" name="email" value=(email) required autofocus autocomplete="username";
                    }
                    div.field {
                        label for="password" { "Password" }
                        input #password type="password" name="password" required autocomplete="current-password";
                    }
                    button.primary.wide type="submit" { "Log in" }
                }
            }
            p.muted.small {
                "The first account's login is printed once when " code { "tender serve" }
                " starts on an empty store; " code { "tender accounts create" } " makes more."
            }
        },
    )
}

fn login_response(
    state: &DashboardState,
    status: StatusCode,
    token: &str,
    email: &str,
    notice: &Notice,
) -> Response {
    let mut resp = html_response(status, login_form(token, email, notice));
    resp.headers_mut().append(
        header::SET_COOKIE,
        state.cookie(LOGIN_COOKIE, token, LOGIN_TOKEN_SECS),
    );
    resp
}

/// `GET /dashboard/login`.
pub async fn login_page(
    State(state): State<DashboardState>,
    session: Result<Session, DashError>,
) -> Response {
    if session.is_ok() {
        return see_other("/dashboard/payments");
    }
    let token = random_base62(32);
    login_response(&state, StatusCode::OK, &token, "", &Notice::None)
}

/// `POST /dashboard/login`.
pub async fn login(State(state): State<DashboardState>, req: Request) -> PageResult {
    let (parts, body) = req.into_parts();
    let fields = read_form(body).await?;
    let expected = cookie_value(&parts.headers, LOGIN_COOKIE).unwrap_or_default();
    let sent = fields.raw("csrf_token").unwrap_or_default();
    if expected.is_empty() || !secrets_equal(expected.as_bytes(), sent.as_bytes()) {
        return Err(DashError::Csrf);
    }
    let email = fields.get("email").unwrap_or_default().to_string();
    let password = fields.raw("password").unwrap_or_default();
    let now = state.services().now();
    let attempt = match state.throttle.begin(&email, client_ip(&parts), now) {
        Ok(attempt) => attempt,
        Err(wait) => {
            return Ok(login_response(
                &state,
                StatusCode::TOO_MANY_REQUESTS,
                &expected,
                &email,
                &Notice::Error(too_many(wait)),
            ))
        }
    };
    match state.services().accounts().login(&email, password).await? {
        Some(new) => {
            attempt.succeeded();
            let mut resp = see_other("/dashboard/overview");
            let max_age = new.session.expires_at - new.session.created;
            let headers = resp.headers_mut();
            headers.append(
                header::SET_COOKIE,
                state.cookie(SESSION_COOKIE, &new.token, max_age),
            );
            headers.append(header::SET_COOKIE, state.cookie(LOGIN_COOKIE, "", 0));
            Ok(resp)
        }
        None => {
            let locked = attempt.failed(now);
            let (status, message) = if locked {
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    "Incorrect e-mail or password. Too many failed attempts: this e-mail is \
                     locked for 15 minutes.",
                )
            } else {
                (StatusCode::UNAUTHORIZED, "Incorrect e-mail or password.")
            };
            Ok(login_response(
                &state,
                status,
                &expected,
                &email,
                &Notice::Error(message.into()),
            ))
        }
    }
}

/// The message for a throttled attempt that must wait `wait` seconds.
fn too_many(wait: i64) -> String {
    if wait <= 1 {
        return "Too many attempts at once for this e-mail. Try again in a moment.".into();
    }
    let minutes = (wait + 59) / 60;
    format!(
        "Too many failed attempts. Try again in {minutes} minute{}.",
        if minutes == 1 { "" } else { "s" }
    )
}

/// The client's address for throttling: the connection's peer, or, when that peer is a local
/// proxy (loopback or private address) that says whom it forwards for, the last address of
/// `X-Forwarded-For`.
pub fn client_ip(parts: &axum::http::request::Parts) -> Option<std::net::IpAddr> {
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()?
        .0
        .ip();
    let local = match peer {
        std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
        std::net::IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
    };
    if local {
        let forwarded = parts
            .headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|v| v.trim().parse().ok());
        if forwarded.is_some() {
            return forwarded;
        }
    }
    Some(peer)
}

/// `POST /dashboard/logout`.
pub async fn logout(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    state
        .services()
        .accounts()
        .logout(&posted.session.token)
        .await?;
    let mut resp = see_other("/dashboard/login");
    resp.headers_mut()
        .append(header::SET_COOKIE, state.cookie(SESSION_COOKIE, "", 0));
    Ok(resp)
}

/// Where the switch may send the browser back to: a dashboard section, nothing else.
fn safe_return(path: Option<&str>) -> &str {
    match path {
        Some(p)
            if p.starts_with("/dashboard/")
                && p.bytes().all(|b| b.is_ascii_lowercase() || b == b'/') =>
        {
            p
        }
        _ => "/dashboard/payments",
    }
}

/// `POST /dashboard/mode`: show test or live data from now on.
pub async fn switch_mode(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let mode = match posted.fields.get("mode") {
        Some("test") => Mode::Test,
        Some("live") => Mode::Live,
        _ => return Err(DashError::BadRequest("Choose test or live.".into())),
    };
    state
        .services()
        .accounts()
        .switch_session_mode(&posted.session.record, mode)
        .await?;
    Ok(see_other(safe_return(posted.fields.get("return_to"))))
}

/// `?done=…` after a POST-redirect-GET: which success message to show.
#[derive(Deserialize)]
pub struct Done {
    pub done: Option<String>,
}

async fn render_account(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let Some(account) = state
        .services()
        .store
        .find_account(&session.record.account)
        .await
        .map_err(CoreError::from)?
    else {
        return Err(DashError::LoginRequired);
    };
    let body = html! {
        div.columns {
            (password_form(session))
            section.card {
                h2 { "What customers see" }
                p.muted { "Receipts show the business name and the e-mail customers can write to; never your login e-mail." }
                form method="post" action="/dashboard/account/profile" {
                    (csrf_field(session))
                    div.field {
                        label for="business_name" { "Business name" }
                        input #business_name type="text" name="name" maxlength="200" value=(account.name.as_deref().unwrap_or(""));
                    }
                    div.field {
                        label for="public_email" { "Public e-mail" }
                        input #public_email type="email" name="public_email" maxlength="512" value=(account.public_email.as_deref().unwrap_or(""));
                    }
                    button.primary type="submit" { "Save" }
                }
            }
            (time_zone_form(session))
            section.card {
                h2 { "Account" }
                dl.props {
                    dt { "Business name" } dd { (account.name.as_deref().unwrap_or("—")) }
                    dt { "Login e-mail" } dd { (account.email) }
                    dt { "Account id" } dd.mono { (account.id) }
                    dt { "Created" } dd { (layout::when(account.created)) }
                    dt { "Session ends" } dd { (layout::when(session.record.expires_at)) }
                }
            }
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Account, "Account", &notice, body),
    ))
}

/// The form that changes the session's password.
fn password_form(session: &Session) -> Markup {
    html! {
        section.card {
            h2 { "Change password" }
            form method="post" action="/dashboard/account/password" {
                (csrf_field(session))
                div.field {
                    label for="current_password" { "Current password" }
                    input #current_password type="password" name="current_password" required autocomplete="current-password";
                }
                div.field {
                    label for="new_password" { "New password" }
                    input #new_password type="password" name="new_password" required minlength="8" autocomplete="new-password";
                }
                div.field {
                    label for="confirm_password" { "New password, again" }
                    input #confirm_password type="password" name="confirm_password" required minlength="8" autocomplete="new-password";
                }
                button.primary type="submit" { "Change password" }
            }
        }
    }
}

/// The form that chooses the time zone the pages show times in.
fn time_zone_form(session: &Session) -> Markup {
    html! {
        section.card {
            h2 { "Time zone" }
            p.muted { "Times on these pages are shown with seconds in this time zone, summer time included (the abbreviation says which: CET, CEST)." }
            form method="post" action="/dashboard/account/timezone" {
                (csrf_field(session))
                div.field {
                    label for="zone" { "Show times in" }
                    @let current = layout::viewer_zone();
                    select #zone name="zone" {
                        @for z in layout::zone_choices() {
                            option value=(z.name()) selected[z == current] { (z.name().replace('_', " ")) }
                        }
                    }
                }
                button type="submit" { "Use this time zone" }
            }
        }
    }
}

/// `GET /dashboard/account`.
pub async fn account_page(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("password") => Notice::Success("Your password was changed.".into()),
        Some("profile") => Notice::Success("Saved. Receipts show it from now on.".into()),
        Some("timezone") => Notice::Success("Times are now shown in this time zone.".into()),
        _ => Notice::None,
    };
    render_account(&state, &session, StatusCode::OK, notice).await
}

/// `POST /dashboard/account/timezone`: the zone times are shown in, kept in a cookie.
pub async fn set_timezone(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let zone = posted
        .fields
        .get("zone")
        .and_then(layout::parse_zone)
        .ok_or_else(|| DashError::BadRequest("Choose a time zone from the list.".into()))?;
    let mut resp = see_other("/dashboard/account?done=timezone");
    resp.headers_mut().append(
        header::SET_COOKIE,
        state.cookie(layout::TZ_COOKIE, zone.name(), 365 * 86_400),
    );
    Ok(resp)
}

/// `POST /dashboard/account/profile`: the business name and public e-mail on receipts.
pub async fn update_profile(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let f = &posted.fields;
    match state
        .services()
        .accounts()
        .update_account_profile(
            &posted.session.record.account,
            f.get("name"),
            f.get("public_email"),
        )
        .await
    {
        Ok(_) => Ok(see_other("/dashboard/account?done=profile")),
        Err(e) => refused(&state, &posted.session, e).await,
    }
}

/// The Account page again with the reason an action was refused (400); a failure of ours
/// stays an error page.
async fn refused(state: &DashboardState, session: &Session, e: CoreError) -> PageResult {
    match user_message(&e) {
        Some(message) => {
            render_account(
                state,
                session,
                StatusCode::BAD_REQUEST,
                Notice::Error(message),
            )
            .await
        }
        None => Err(e.into()),
    }
}

/// `POST /dashboard/account/password`. A wrong current password counts as a failed login.
pub async fn change_password(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let f = &posted.fields;
    let now = state.services().now();
    let email = state
        .services()
        .store
        .find_account(&posted.session.record.account)
        .await
        .map_err(CoreError::from)?
        .map(|a| a.email)
        .unwrap_or_default();
    let attempt = match state.throttle.begin(&email, posted.client, now) {
        Ok(attempt) => attempt,
        Err(wait) => {
            let notice = Notice::Error(too_many(wait));
            return render_account(
                &state,
                &posted.session,
                StatusCode::TOO_MANY_REQUESTS,
                notice,
            )
            .await;
        }
    };
    let current = f.raw("current_password").unwrap_or_default();
    let new = f.raw("new_password").unwrap_or_default();
    if f.raw("confirm_password").unwrap_or_default() != new {
        let notice = Notice::Error("The new passwords do not match.".into());
        return render_account(&state, &posted.session, StatusCode::BAD_REQUEST, notice).await;
    }
    match state
        .services()
        .accounts()
        .change_password(&posted.session.record, current, new)
        .await
    {
        Ok(()) => {
            attempt.succeeded();
            Ok(see_other("/dashboard/account?done=password"))
        }
        Err(e) => {
            if matches!(
                &e,
                CoreError::InvalidParam {
                    code: "password_incorrect",
                    ..
                }
            ) {
                attempt.failed(now);
            }
            refused(&state, &posted.session, e).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_switch_returns_only_to_dashboard_sections() {
        assert_eq!(safe_return(Some("/dashboard/keys")), "/dashboard/keys");
        assert_eq!(safe_return(Some("//evil.example")), "/dashboard/payments");
        assert_eq!(safe_return(Some("/dashboard/x?y")), "/dashboard/payments");
        assert_eq!(safe_return(Some("https://x")), "/dashboard/payments");
        assert_eq!(safe_return(None), "/dashboard/payments");
    }
}
