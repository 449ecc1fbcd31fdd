//! Test clocks (`clock_`): the stored form. What advancing one does is `billing::clocks`'.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockStatus {
    Ready,
    Advancing,
}

impl ClockStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClockStatus::Ready => "ready",
            ClockStatus::Advancing => "advancing",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advancing {
    pub target_frozen_time: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockStatusDetails {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub advancing: Option<Advancing>,
}

/// Time for the customers attached to it (`clock_`, test mode only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestClock {
    pub id: String,
    pub object: String,
    pub frozen_time: i64,
    pub status: ClockStatus,
    pub status_details: ClockStatusDetails,
    pub name: Option<String>,
    pub created: i64,
    /// Always false: test clocks exist in test mode only.
    #[serde(default)]
    pub livemode: bool,
}

impl crate::documents::document::Document for TestClock {
    const COLLECTION: crate::store::Collection = crate::store::Collection::TestClocks;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }

    fn index(&self) -> crate::store::IndexValues {
        use crate::store::IndexValues;
        IndexValues {
            status: Some(self.status.as_str().into()),
            ..IndexValues::default()
        }
    }
}
