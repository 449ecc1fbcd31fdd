//! The invoice as a PDF (`GET /invoices/{invoice_id}/pdf` on the receipt host, CONTRACT §16):
//! what the hosted invoice page shows, on one A4 page, for the customer to file — who bills, the
//! invoice's number, period and status, each line with its period, the total, what was paid
//! and what is due.
//!
//! Written with `printpdf` in PDF's built-in Helvetica (no font file to ship). Helvetica's
//! encoding covers Latin-1 only, so text outside it (a merchant's name in another script) is
//! printed with `?` in its place rather than as broken glyphs.
//!
//! Depends on `tender_core`'s hosted invoice and `printpdf`.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use printpdf::{BuiltinFont, IndirectFontRef, Mm, PdfDocument, PdfLayerReference};
use tender_core::billing::hosted::HostedInvoice;
use tender_core::clock::format_date;
use tender_core::money::format_amount;

use super::invoices::status_words;
use super::{not_found, server_error};
use crate::state::AppState;

/// Left margin, the amount column and the line height, in millimetres.
const LEFT: f32 = 20.0;
const AMOUNTS: f32 = 150.0;
const LINE: f32 = 7.0;
/// Lines that fit under the header before the page's bottom margin.
const MAX_LINES: usize = 28;

pub(super) async fn invoice_pdf(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.services.billing().find_hosted_invoice(&id).await {
        Ok(Some(h)) => match render(&h) {
            Ok(bytes) => (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, "application/pdf".to_string()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("inline; filename=\"{}.pdf\"", file_name(&h)),
                    ),
                ],
                bytes,
            )
                .into_response(),
            Err(e) => server_error(tender_core::error::CoreError::internal("write a PDF", e)),
        },
        Ok(None) => not_found().await,
        Err(e) => server_error(e),
    }
}

/// The invoice's number (else its id): letters, digits and hyphens only.
fn file_name(h: &HostedInvoice) -> String {
    let inv = &h.invoice;
    inv.number
        .as_deref()
        .unwrap_or(&inv.id)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

/// Characters of a line's description that fit left of the amount column at 10 pt.
const DESCRIPTION_CHARS: usize = 72;

/// `s` cut to `max` characters, ending in "..." when it was longer.
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let kept: String = s.chars().take(max.saturating_sub(3)).collect();
    format!("{kept}...")
}

/// Text Helvetica can print: Latin-1, anything else as `?`.
fn latin1(s: &str) -> String {
    s.chars()
        .map(|c| {
            if (c as u32) < 256 && !c.is_control() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// A page being written top down.
struct Writer {
    layer: PdfLayerReference,
    regular: IndirectFontRef,
    bold: IndirectFontRef,
    /// The baseline of the next line, from the page's bottom.
    y: f32,
}

impl Writer {
    fn text(&self, s: &str, size: f32, x: f32, bold: bool) {
        let font = if bold { &self.bold } else { &self.regular };
        self.layer
            .use_text(latin1(s), size, Mm(x), Mm(self.y), font);
    }

    /// A row: `left` at the margin, `right` in the amount column.
    fn row(&mut self, left: &str, right: &str, bold: bool) {
        self.text(left, 10.0, LEFT, bold);
        self.text(right, 10.0, AMOUNTS, bold);
        self.y -= LINE;
    }
}

fn render(h: &HostedInvoice) -> Result<Vec<u8>, printpdf::Error> {
    let inv = &h.invoice;
    let number = inv.number.as_deref().unwrap_or(&inv.id);
    let (doc, page, layer) =
        PdfDocument::new(format!("Invoice {number}"), Mm(210.0), Mm(297.0), "invoice");
    let mut w = Writer {
        layer: doc.get_page(page).get_layer(layer),
        regular: doc.add_builtin_font(BuiltinFont::Helvetica)?,
        bold: doc.add_builtin_font(BuiltinFont::HelveticaBold)?,
        y: 270.0,
    };
    if !inv.livemode {
        w.text("TEST MODE", 9.0, AMOUNTS, true);
    }
    w.text(&format!("Invoice {number}"), 18.0, LEFT, true);
    w.y -= 10.0;
    if let Some(m) = &h.merchant {
        w.row("From", m, false);
    }
    w.row("Invoice number", number, false);
    w.row(
        "Period",
        &format!(
            "{} - {}",
            format_date(inv.period_start),
            format_date(inv.period_end)
        ),
        false,
    );
    w.row("Issued", &format_date(inv.created), false);
    w.row("Status", status_words(inv.status), false);
    w.y -= LINE;
    w.row("Description", "Amount", true);
    let shown = inv.lines.data.len().min(MAX_LINES);
    for line in &inv.lines.data[..shown] {
        let described = format!(
            "{} ({} - {})",
            line.description,
            format_date(line.period.start),
            format_date(line.period.end)
        );
        w.row(
            &fit(&described, DESCRIPTION_CHARS),
            &format_amount(line.amount, inv.currency),
            false,
        );
    }
    if inv.lines.data.len() > shown {
        w.row(
            &format!("... and {} more lines", inv.lines.data.len() - shown),
            "",
            false,
        );
    }
    w.y -= LINE / 2.0;
    w.row("Total", &format_amount(inv.amount_due, inv.currency), true);
    w.row("Paid", &format_amount(inv.amount_paid, inv.currency), false);
    w.row(
        "Amount due",
        &format_amount(inv.amount_due - inv.amount_paid, inv.currency),
        true,
    );
    if let Some(email) = &h.merchant_email {
        w.y -= LINE;
        w.row(&format!("Questions? Write to {email}."), "", false);
    }
    doc.save_to_bytes()
}

#[cfg(test)]
mod tests {
    use super::{fit, latin1};

    #[test]
    fn long_descriptions_are_cut_before_the_amount_column() {
        assert_eq!(fit("Gold plan", 72), "Gold plan");
        let long = "x".repeat(100);
        let cut = fit(&long, 72);
        assert_eq!(cut.chars().count(), 72);
        assert!(cut.ends_with("..."));
    }

    #[test]
    fn text_outside_latin1_prints_as_a_question_mark() {
        assert_eq!(latin1("Café Zoë"), "Café Zoë");
        assert_eq!(latin1("東京 shop"), "?? shop");
        assert_eq!(latin1("a\u{0}b"), "a?b");
    }
}
