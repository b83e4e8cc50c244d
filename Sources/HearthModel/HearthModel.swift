// The realtime-database data model.
