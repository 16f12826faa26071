package validate

// MultiSink calls every sink in order.
type MultiSink []Sink

var _ Sink = MultiSink(nil)

func (m MultiSink) Record(r *RecordInfo) {
	for _, s := range m {
		s.Record(r)
	}
}

func (m MultiSink) Finding(f *Finding) {
	for _, s := range m {
		s.Finding(f)
	}
}

func (m MultiSink) StreamStart(i *StreamInfo) {
	for _, s := range m {
		s.StreamStart(i)
	}
}

func (m MultiSink) StreamEnd(i *StreamInfo) {
	for _, s := range m {
		s.StreamEnd(i)
	}
}

// LossMark tells the sinks that mark losses (LossMarker).
func (m MultiSink) LossMark(in *Input) {
	for _, s := range m {
		if lm, ok := s.(LossMarker); ok {
			lm.LossMark(in)
		}
	}
}

// OpenLeft tells the sinks that mark open streams left (OpenMarker).
func (m MultiSink) OpenLeft() {
	for _, s := range m {
		if om, ok := s.(OpenMarker); ok {
			om.OpenLeft()
		}
	}
}

// RecordsIgnored says whether every sink ignores the records.
func (m MultiSink) RecordsIgnored() bool {
	for _, s := range m {
		if !recordsIgnored(s) {
			return false
		}
	}
	return true
}

// StreamsIgnored says whether every sink ignores the streams.
func (m MultiSink) StreamsIgnored() bool {
	for _, s := range m {
		if !streamsIgnored(s) {
			return false
		}
	}
	return true
}
