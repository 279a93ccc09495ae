use crate::error::{LfError, LfResult};

/// One page of a listing: `limit` in 1..=100 (or a list's own range), `offset` from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRequest {
    limit: u32,
    offset: u64,
}

impl PageRequest {
    pub const DEFAULT_LIMIT: u32 = 20;
    pub const MAX_LIMIT: u32 = 100;
    /// Offsets beyond this are refused: deep offset paging is a scan, and no
    /// listing here is that long in practice.
    pub const MAX_OFFSET: u64 = 1_000_000;

    pub fn new(limit: Option<i64>, offset: Option<i64>) -> LfResult<Self> {
        Self::within(limit, offset, Self::DEFAULT_LIMIT, Self::MAX_LIMIT)
    }

    /// A page of a listing whose `limit` defaults to `default` and goes up
    /// to `max` (the spec gives some lists their own range).
    pub fn within(limit: Option<i64>, offset: Option<i64>, default: u32, max: u32) -> LfResult<Self> {
        let limit = limit.unwrap_or(default as i64);
        if !(1..=max as i64).contains(&limit) {
            return Err(LfError::invalid_argument(format!("limit must be between 1 and {max}, got {limit}"))
                .with_field("limit"));
        }
        let offset = offset.unwrap_or(0);
        if !(0..=Self::MAX_OFFSET as i64).contains(&offset) {
            return Err(LfError::invalid_argument(format!(
                "offset must be between 0 and {}, got {offset}",
                Self::MAX_OFFSET
            ))
            .with_field("offset"));
        }
        Ok(Self { limit: limit as u32, offset: offset as u64 })
    }

    pub fn first(limit: u32) -> Self {
        Self { limit: limit.clamp(1, Self::MAX_LIMIT), offset: 0 }
    }
    pub fn limit(&self) -> u32 {
        self.limit
    }
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        Self::first(Self::DEFAULT_LIMIT)
    }
}

/// A page of results with the total count of the whole listing.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u64,
    pub limit: u32,
    pub offset: u64,
}

impl<T> Page<T> {
    pub fn new(items: Vec<T>, total: u64, req: PageRequest) -> Self {
        Self { items, total, limit: req.limit, offset: req.offset }
    }
    pub fn has_more(&self) -> bool {
        self.offset + (self.items.len() as u64) < self.total
    }
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            total: self.total,
            limit: self.limit,
            offset: self.offset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors of the original's envelope tests.
    #[test]
    fn has_more_vectors() {
        let p = Page::new(vec![1, 2, 3], 25, PageRequest::new(Some(3), Some(0)).unwrap());
        assert!(p.has_more());
        let p = Page::new(vec![1, 2], 4, PageRequest::new(Some(2), Some(2)).unwrap());
        assert!(!p.has_more());
        let p: Page<i32> = Page::new(vec![], 0, PageRequest::default());
        assert!(!p.has_more());
    }

    #[test]
    fn ranges() {
        assert_eq!(PageRequest::new(None, None).unwrap().limit(), 20);
        for bad in [0, 101, -1, i64::MAX] {
            assert_eq!(
                PageRequest::new(Some(bad), None).unwrap_err().code(),
                crate::ErrorCode::InvalidArgument
            );
        }
        assert!(PageRequest::new(None, Some(-1)).is_err());
        assert!(PageRequest::new(Some(100), Some(1_000_000)).is_ok());
    }
}
