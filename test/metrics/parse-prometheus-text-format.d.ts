// Types of the text parser the metrics tests read /metrics with (the package ships none).
declare module 'parse-prometheus-text-format' {
  interface Sample {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  interface MetricFamily {
    name: string;
    help: string;
    type: 'GAUGE' | 'COUNTER' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
